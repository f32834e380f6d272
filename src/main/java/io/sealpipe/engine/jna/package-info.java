/**
 * The openssl-jna engine: the same libcrypto calls as openssl-jni, made through JNA, for
 * platforms where libsealpipe.so is not available. Needs JNA ({@code net.java.dev.jna:jna}), an
 * optional dependency: without it the engine is reported unavailable, naming the coordinates.
 */
package io.sealpipe.engine.jna;
