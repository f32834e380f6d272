/**
 * The openssl-jni engine: sealpipe's own JNI library (src/main/native), which opens libcrypto
 * (OpenSSL 3.x or 1.1) at run time. The library ships in the jar for linux-x86_64 and is
 * extracted to a private temporary file when it loads ({@code sealpipe.native.library} names
 * another). The bridge class with the native methods is package-private; only
 * {@link io.sealpipe.engine.openssl.OpenSslJniEngine} is public.
 */
package io.sealpipe.engine.openssl;
