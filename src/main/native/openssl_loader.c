/*
 * Opens libcrypto at run time and resolves the functions sealpipe calls.
 *
 * One .so serves OpenSSL 1.1 and 3.x: every function is looked up by a list of names (3.x
 * renamed several, e.g. EVP_CIPHER_CTX_block_size became EVP_CIPHER_CTX_get_block_size), and
 * on 3.x each EVP_CIPHER is fetched once with EVP_CIPHER_fetch instead of being looked up
 * implicitly on every init.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sealpipe.h"

struct libcrypto *sp_crypto = NULL;

static const char *const default_names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"};

/* Resolves the first of names that the library exports; NULL if none. */
static void *resolve(void *handle, const char *const *names) {
    for (; *names != NULL; names++) {
        void *sym = dlsym(handle, *names);
        if (sym != NULL) {
            return sym;
        }
    }
    return NULL;
}

#define RESOLVE(field, ...)                                                        \
    do {                                                                           \
        static const char *const names_##field[] = {__VA_ARGS__, NULL};            \
        *(void **)&c->field = resolve(c->handle, names_##field);                   \
        if (c->field == NULL && missing == NULL) {                                 \
            missing = names_##field[0];                                            \
        }                                                                          \
    } while (0)

static const char *const cipher_names[4][3] = {
    {NULL, NULL, NULL},
    {"AES-128-CTR", "AES-192-CTR", "AES-256-CTR"},
    {"AES-128-GCM", "AES-192-GCM", "AES-256-GCM"},
    {"AES-128-CFB", "AES-192-CFB", "AES-256-CFB"},
};
static const char *const legacy_getters[4][3] = {
    {NULL, NULL, NULL},
    {"EVP_aes_128_ctr", "EVP_aes_192_ctr", "EVP_aes_256_ctr"},
    {"EVP_aes_128_gcm", "EVP_aes_192_gcm", "EVP_aes_256_gcm"},
    {"EVP_aes_128_cfb128", "EVP_aes_192_cfb128", "EVP_aes_256_cfb128"},
};

/* Looks up every cipher once; returns the name of one that failed, or NULL. */
static const char *load_ciphers(struct libcrypto *c) {
    for (int mode = SP_AES_CTR; mode <= SP_AES_CFB128; mode++) {
        for (int k = 0; k < 3; k++) {
            const EVP_CIPHER *cipher = NULL;
            if (c->EVP_CIPHER_fetch != NULL) {
                cipher = c->EVP_CIPHER_fetch(NULL, cipher_names[mode][k], NULL);
            } else {
                const EVP_CIPHER *(*getter)(void);
                *(void **)&getter = dlsym(c->handle, legacy_getters[mode][k]);
                cipher = getter != NULL ? getter() : NULL;
            }
            if (cipher == NULL) {
                return cipher_names[mode][k];
            }
            c->ciphers[mode][k] = cipher;
        }
    }
    return NULL;
}

const EVP_CIPHER *sp_cipher(int mode, int key_length) {
    int k = key_length == 16 ? 0 : key_length == 24 ? 1 : key_length == 32 ? 2 : -1;
    if (sp_crypto == NULL || mode < SP_AES_CTR || mode > SP_AES_CFB128 || k < 0) {
        return NULL;
    }
    return sp_crypto->ciphers[mode][k];
}

static void *open_library(const char *path, char *tried, size_t tried_size) {
    if (path != NULL) {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            snprintf(tried, tried_size, "%s", dlerror());
        }
        return h;
    }
    size_t used = 0;
    for (size_t i = 0; i < sizeof(default_names) / sizeof(default_names[0]); i++) {
        void *h = dlopen(default_names[i], RTLD_NOW | RTLD_LOCAL);
        if (h != NULL) {
            return h;
        }
        int n = snprintf(tried + used, tried_size - used, "%s%s", used ? "; " : "", dlerror());
        if (n > 0 && (size_t)n < tried_size - used) {
            used += (size_t)n;
        }
    }
    return NULL;
}

/*
 * Loads libcrypto from path (NULL: the default names in order). Idempotent: the first success
 * wins for the life of the process. Throws UnsatisfiedLinkError naming what failed.
 */
jboolean sp_load_libcrypto(JNIEnv *env, jstring jpath) {
    if (sp_crypto != NULL) {
        return JNI_TRUE;
    }
    const char *path = NULL;
    if (jpath != NULL) {
        path = (*env)->GetStringUTFChars(env, jpath, NULL);
        if (path == NULL) {
            return JNI_FALSE; /* OutOfMemoryError pending */
        }
    }
    char message[2048];
    char tried[1536] = "";
    struct libcrypto *c = calloc(1, sizeof(*c));
    const char *missing = NULL;
    if (c == NULL) {
        sp_throw(env, "java/lang/OutOfMemoryError", "allocating the libcrypto function table");
        goto cleanup;
    }
    c->handle = open_library(path, tried, sizeof(tried));
    if (c->handle == NULL) {
        snprintf(message, sizeof(message), "cannot open libcrypto (%s)", tried);
        sp_throw(env, "java/lang/UnsatisfiedLinkError", message);
        goto cleanup;
    }
    RESOLVE(OpenSSL_version, "OpenSSL_version", "SSLeay_version");
    RESOLVE(OpenSSL_version_num, "OpenSSL_version_num", "SSLeay");
    RESOLVE(EVP_CIPHER_CTX_new, "EVP_CIPHER_CTX_new");
    RESOLVE(EVP_CIPHER_CTX_free, "EVP_CIPHER_CTX_free");
    RESOLVE(EVP_CipherInit_ex, "EVP_CipherInit_ex");
    RESOLVE(EVP_CipherUpdate, "EVP_CipherUpdate");
    RESOLVE(EVP_CipherFinal_ex, "EVP_CipherFinal_ex");
    RESOLVE(EVP_CIPHER_CTX_ctrl, "EVP_CIPHER_CTX_ctrl");
    RESOLVE(EVP_sha256, "EVP_sha256");
    RESOLVE(HMAC_CTX_new, "HMAC_CTX_new");
    RESOLVE(HMAC_CTX_free, "HMAC_CTX_free");
    RESOLVE(HMAC_Init_ex, "HMAC_Init_ex");
    RESOLVE(HMAC_Update, "HMAC_Update");
    RESOLVE(HMAC_Final, "HMAC_Final");
    RESOLVE(ERR_get_error, "ERR_get_error");
    RESOLVE(ERR_error_string_n, "ERR_error_string_n");
    RESOLVE(ERR_clear_error, "ERR_clear_error");
    RESOLVE(OPENSSL_cleanse, "OPENSSL_cleanse");
    if (missing != NULL) {
        snprintf(message, sizeof(message),
                 "libcrypto does not export %s: OpenSSL 1.1 or 3.x is required", missing);
        sp_throw(env, "java/lang/UnsatisfiedLinkError", message);
        goto cleanup;
    }
    /* Optional: present on 3.x only. */
    *(void **)&c->EVP_CIPHER_fetch = dlsym(c->handle, "EVP_CIPHER_fetch");
    c->is_v3 = c->EVP_CIPHER_fetch != NULL;

    const char *bad_cipher = load_ciphers(c);
    if (bad_cipher != NULL) {
        snprintf(message, sizeof(message), "libcrypto has no %s cipher", bad_cipher);
        sp_throw(env, "java/lang/UnsatisfiedLinkError", message);
        goto cleanup;
    }
    Dl_info info;
    if (dladdr(*(void **)&c->EVP_CipherInit_ex, &info) != 0 && info.dli_fname != NULL) {
        snprintf(c->path, sizeof(c->path), "%s", info.dli_fname);
    } else {
        snprintf(c->path, sizeof(c->path), "%s", path != NULL ? path : "libcrypto");
    }
    sp_crypto = c;
    c = NULL;

cleanup:
    if (c != NULL) {
        if (c->handle != NULL) {
            dlclose(c->handle);
        }
        free(c);
    }
    if (path != NULL) {
        (*env)->ReleaseStringUTFChars(env, jpath, path);
    }
    return sp_crypto != NULL ? JNI_TRUE : JNI_FALSE;
}
