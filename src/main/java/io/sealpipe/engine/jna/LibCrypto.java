package io.sealpipe.engine.jna;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;

/**
 * JNA direct mapping of the libcrypto functions the openssl-jna engine calls. The names are the
 * same in OpenSSL 1.1 and 3.x. Registered once, against the first library that opens.
 */
final class LibCrypto {
    private LibCrypto() {}

    static final int EVP_CTRL_GCM_GET_TAG = 0x10;
    static final int EVP_CTRL_GCM_SET_TAG = 0x11;

    private static final String[] DEFAULT_NAMES = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"};

    /** Opens libcrypto (path, or the default names in order) and binds the methods below. */
    static NativeLibrary load(String path) {
        String[] names = path != null ? new String[] {path} : DEFAULT_NAMES;
        UnsatisfiedLinkError failures = new UnsatisfiedLinkError(
                "cannot open libcrypto through JNA (tried " + String.join(", ", names) + ")");
        for (String name : names) {
            try {
                NativeLibrary library = NativeLibrary.getInstance(name);
                Native.register(LibCrypto.class, library);
                return library;
            } catch (UnsatisfiedLinkError e) {
                failures.addSuppressed(e);
            }
        }
        throw failures;
    }

    static native String OpenSSL_version(int type);

    static native Pointer EVP_aes_128_ctr();

    static native Pointer EVP_aes_192_ctr();

    static native Pointer EVP_aes_256_ctr();

    static native Pointer EVP_aes_128_gcm();

    static native Pointer EVP_aes_192_gcm();

    static native Pointer EVP_aes_256_gcm();

    static native Pointer EVP_aes_128_cfb128();

    static native Pointer EVP_aes_192_cfb128();

    static native Pointer EVP_aes_256_cfb128();

    static native Pointer EVP_CIPHER_CTX_new();

    static native void EVP_CIPHER_CTX_free(Pointer ctx);

    static native int EVP_CipherInit_ex(Pointer ctx, Pointer cipher, Pointer engine, byte[] key, byte[] iv, int enc);

    static native int EVP_CipherUpdate(Pointer ctx, Pointer out, int[] outl, Pointer in, int inl);

    static native int EVP_CipherFinal_ex(Pointer ctx, Pointer out, int[] outl);

    static native int EVP_CIPHER_CTX_ctrl(Pointer ctx, int type, int arg, byte[] ptr);

    static native Pointer EVP_sha256();

    static native Pointer HMAC_CTX_new();

    static native void HMAC_CTX_free(Pointer ctx);

    static native int HMAC_Init_ex(Pointer ctx, byte[] key, int len, Pointer md, Pointer engine);

    static native int HMAC_Update(Pointer ctx, Pointer data, NativeLong len);

    static native int HMAC_Final(Pointer ctx, byte[] md, int[] len);

    static native NativeLong ERR_get_error();

    static native void ERR_error_string_n(NativeLong e, byte[] buf, NativeLong len);
}
