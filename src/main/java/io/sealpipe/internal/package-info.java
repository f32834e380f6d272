/**
 * Implementation helpers shared by the engines (argument checks, buffer handling, base classes).
 * Not an API: anything here may change without notice.
 */
package io.sealpipe.internal;
