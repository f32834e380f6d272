/**
 * The jce engine: {@code javax.crypto} with the JDK's or a named provider
 * ({@code sealpipe.jce.provider}), fed in bounded slices. It runs wherever Java does, and is
 * what {@code auto} chooses when neither OpenSSL engine can be used or the CPU lacks hardware AES
 * (AES-NI, ARMv8 AES).
 */
package io.sealpipe.engine.jce;
