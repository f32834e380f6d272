/**
 * The openssl-jni engine: sealpipe's own JNI library (src/main/native), which opens libcrypto
 * (OpenSSL 3.x or 1.1) at run time. {@code NativeCrypto} is the only class with native methods.
 */
package io.sealpipe.engine.openssl;
