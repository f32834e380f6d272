package io.sealpipe.internal;

import java.io.IOException;
import java.lang.reflect.Field;
import java.security.GeneralSecurityException;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.kms.KMSClientProvider;
import org.apache.hadoop.crypto.key.kms.LoadBalancingKMSClientProvider;
import org.apache.hadoop.crypto.key.kms.ValueQueue;
import org.apache.hadoop.security.AccessControlException;

/**
 * Hadoop's crypto extension of a key provider, whose {@link #generateEncryptedKey} costs a KMS
 * exactly one {@code GENERATE_EEK} request.
 *
 * <p>Hadoop's KMS client ({@link KMSClientProvider}) hands out wrapped keys from a queue: its
 * first take fills the queue with one request, and a take that leaves the queue below its low
 * watermark starts a refill from a thread of its own. So every JVM's first data key costs two
 * requests, and the second key waits in the queue for a next data key that a writer keeping one
 * for minutes rarely needs (a Spark job's executors and driver each paid one request more). The
 * request itself (authentication, delegation tokens, the proxy user, SSL, timeouts) is the
 * queue's filler, Hadoop's own code: this asks that filler for one key, past the queue, on the
 * KMS hosts in turn as {@link LoadBalancingKMSClientProvider} does (the next host after a
 * failure; a refusal from any is final).
 *
 * <p>The filler is reached through two private fields, {@code KMSClientProvider.encKeyVersionQueue}
 * and {@code ValueQueue.refiller} (both since Hadoop 2.6; checked in 3.3.4 and 3.4.1). Where they
 * are not there, or the provider is not a KMS client (a keystore), {@link #of} gives Hadoop's own
 * extension. Used by the sealed file system's envelope mode and the CLI's envelope files.
 */
public final class KmsGeneration extends KeyProviderCryptoExtension {
    private static final Log LOG = Log.of(KmsGeneration.class);
    private static final Field QUEUE = field(KMSClientProvider.class, "encKeyVersionQueue");
    private static final Field FILLER = field(ValueQueue.class, "refiller");

    private final KMSClientProvider[] hosts;
    /** The host tried first, in turn across generations (the client shuffled its hosts already). */
    private final AtomicInteger next = new AtomicInteger();

    private KmsGeneration(KeyProvider provider, CryptoExtension extension, KMSClientProvider[] hosts) {
        super(provider, extension);
        this.hosts = hosts;
    }

    /** The crypto extension of {@code provider}: this one for Hadoop's KMS client, Hadoop's own for any other. */
    public static KeyProviderCryptoExtension of(KeyProvider provider) {
        KMSClientProvider[] hosts = hosts(provider);
        return hosts == null ? createKeyProviderCryptoExtension(provider)
                : new KmsGeneration(provider, (CryptoExtension) provider, hosts);
    }

    /** One new wrapped data key under {@code keyName}, in one request. */
    @Override
    public EncryptedKeyVersion generateEncryptedKey(String keyName) throws IOException, GeneralSecurityException {
        int first = Math.floorMod(next.getAndIncrement(), hosts.length);
        IOException failed = null;
        for (int i = 0; i < hosts.length; i++) {
            KMSClientProvider host = hosts[(first + i) % hosts.length];
            Queue<EncryptedKeyVersion> one = new ArrayDeque<>(1);
            try {
                filler(host).fillQueueForKey(keyName, one, 1);
            } catch (AccessControlException refused) {
                throw refused;
            } catch (IOException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
                if (i < hosts.length - 1) {
                    LOG.warn("{} failed to generate a data key under '{}' ({}): trying the next of its hosts", host,
                            keyName, e.toString());
                }
                continue;
            }
            if (one.size() != 1) {
                throw new IOException(host + " answered a request for one wrapped data key under '" + keyName
                        + "' with " + one.size());
            }
            return one.remove();
        }
        throw failed;
    }

    /** The KMS clients behind {@code provider}, each with its queue's filler; null if there are none. */
    private static KMSClientProvider[] hosts(KeyProvider provider) {
        KMSClientProvider[] hosts;
        if (provider instanceof LoadBalancingKMSClientProvider balanced) {
            hosts = balanced.getProviders();
        } else if (provider instanceof KMSClientProvider single) {
            hosts = new KMSClientProvider[] {single};
        } else {
            return null;
        }
        if (hosts == null || hosts.length == 0) {
            return null;
        }
        for (KMSClientProvider host : hosts) {
            if (filler(host) == null) {
                return null;
            }
        }
        return hosts.clone();
    }

    @SuppressWarnings("unchecked")
    private static ValueQueue.QueueRefiller<EncryptedKeyVersion> filler(KMSClientProvider host) {
        if (QUEUE == null || FILLER == null) {
            return null;
        }
        try {
            Object queue = QUEUE.get(host);
            Object filler = queue == null ? null : FILLER.get(queue);
            return filler instanceof ValueQueue.QueueRefiller<?> refiller
                    ? (ValueQueue.QueueRefiller<EncryptedKeyVersion>) refiller
                    : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static Field field(Class<?> owner, String name) {
        try {
            Field field = owner.getDeclaredField(name);
            field.setAccessible(true);
            return field;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
