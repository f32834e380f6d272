/**
 * The accp engine: AES-GCM and HMAC-SHA256 on the Amazon Corretto Crypto Provider (AWS-LC), an
 * optional dependency. {@code auto} takes GCM from it when its jar is on the class path and it
 * passes its checks; it has no CTR or CFB. Load nothing here unless
 * {@link io.sealpipe.internal.OptionalDependency#ACCP} is present.
 */
package io.sealpipe.engine.accp;
