/** The openssl-jna engine: the same libcrypto calls through JNA, where libsealpipe.so is not available. */
package io.sealpipe.engine.jna;
