/** The jce engine: {@code javax.crypto} with the JDK's or a named provider, fed in bounded slices. */
package io.sealpipe.engine.jce;
