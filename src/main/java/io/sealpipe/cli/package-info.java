/** The {@code sealpipe} command-line tool, run by the {@code ./sealpipe} launcher. */
package io.sealpipe.cli;
