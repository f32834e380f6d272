package io.sealpipe.internal.hadoop;

import io.sealpipe.internal.Log;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.Field;
import java.net.ConnectException;
import java.net.SocketException;
import java.security.GeneralSecurityException;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.kms.KMSClientProvider;
import org.apache.hadoop.crypto.key.kms.LoadBalancingKMSClientProvider;
import org.apache.hadoop.crypto.key.kms.ValueQueue;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.io.retry.RetryPolicies;
import org.apache.hadoop.io.retry.RetryPolicy;
import org.apache.hadoop.security.AccessControlException;

/**
 * Hadoop's crypto extension of a key provider, whose {@link #generateEncryptedKey} costs a KMS
 * exactly one {@code GENERATE_EEK} request.
 *
 * <p>Hadoop's KMS client ({@link KMSClientProvider}) hands out wrapped keys from a queue, and a
 * take that leaves the queue below its low watermark starts a refill from a thread of its own. So
 * every JVM's first data key cost two requests, the second key waiting for a next data key that
 * a writer keeping one for minutes rarely needs. The request itself (authentication and its
 * retry, delegation tokens, the proxy user, SSL, timeouts) is the queue's filler, Hadoop's own
 * code: this asks that filler for one key, past the queue, in the calling thread. The hosts of a
 * {@code kms://} URI of several are tried in turn with the failover of {@link
 * LoadBalancingKMSClientProvider} and its settings ({@code
 * hadoop.security.kms.client.failover.max.retries}, {@code .sleep.base.millis}, {@code
 * .sleep.max.millis}): each host at least once, a pause after each round of them. A refusal
 * (the KMS's {@link AccessControlException}) is final at once, which Hadoop's client means to do
 * but misses for generation, its queue wrapping the refusal.
 *
 * <p>The filler is reached through two private fields, {@code KMSClientProvider.encKeyVersionQueue}
 * and {@code ValueQueue.refiller} (both since Hadoop 2.6; checked in 3.3.4 and 3.4.1). Where they
 * are not there, or the provider is not a KMS client (a keystore), {@link #of} gives Hadoop's own
 * extension (and says so once, where it is a KMS client).
 */
public final class KmsGeneration extends KeyProviderCryptoExtension {
    private static final Log LOG = Log.of(KmsGeneration.class);
    private static final Field QUEUE = field(KMSClientProvider.class, "encKeyVersionQueue");
    private static final Field FILLER = field(ValueQueue.class, "refiller");
    private static final AtomicBoolean SAID_UNREACHABLE = new AtomicBoolean();

    private final KMSClientProvider[] hosts;
    private final ValueQueue.QueueRefiller<EncryptedKeyVersion>[] fillers;
    private final RetryPolicy failover;
    /** The host tried first, in turn across generations. */
    private final AtomicInteger next = new AtomicInteger();

    private KmsGeneration(KeyProvider provider, KMSClientProvider[] hosts,
            ValueQueue.QueueRefiller<EncryptedKeyVersion>[] fillers) {
        super(provider, (CryptoExtension) provider);
        this.hosts = hosts;
        this.fillers = fillers;
        this.failover = failover(provider.getConf(), hosts.length);
    }

    /** The crypto extension of {@code provider}: this one for Hadoop's KMS client, Hadoop's own for any other. */
    public static KeyProviderCryptoExtension of(KeyProvider provider) {
        KMSClientProvider[] hosts;
        if (provider instanceof LoadBalancingKMSClientProvider balanced) {
            hosts = balanced.getProviders().clone();
        } else if (provider instanceof KMSClientProvider single) {
            hosts = new KMSClientProvider[] {single};
        } else {
            return createKeyProviderCryptoExtension(provider);
        }
        @SuppressWarnings("unchecked")
        ValueQueue.QueueRefiller<EncryptedKeyVersion>[] fillers = new ValueQueue.QueueRefiller[hosts.length];
        for (int i = 0; i < hosts.length; i++) {
            fillers[i] = filler(hosts[i]);
            if (fillers[i] == null) {
                if (SAID_UNREACHABLE.compareAndSet(false, true)) {
                    LOG.info("sealpipe: this Hadoop's KMS client has no queue filler where sealpipe looks for it"
                            + " (KMSClientProvider.encKeyVersionQueue, ValueQueue.refiller): data keys come through"
                            + " its queue, a JVM's first costing one GENERATE_EEK request more");
                }
                return createKeyProviderCryptoExtension(provider);
            }
        }
        return new KmsGeneration(provider, hosts, fillers);
    }

    /** One new wrapped data key under {@code keyName}, in one request (one per host tried). */
    @Override
    public EncryptedKeyVersion generateEncryptedKey(String keyName) throws IOException, GeneralSecurityException {
        int first = Math.floorMod(next.getAndIncrement(), hosts.length);
        IOException failed = null;
        for (int failovers = 0; ; failovers++) {
            int at = (first + failovers) % hosts.length;
            Queue<EncryptedKeyVersion> one = new ArrayDeque<>(1);
            try {
                fillers[at].fillQueueForKey(keyName, one, 1);
            } catch (AccessControlException refused) {
                if (failed != null) {
                    refused.addSuppressed(failed);
                }
                throw refused;
            } catch (IOException e) {
                IOException seen = e instanceof SSLException || e instanceof SocketException
                        ? (IOException) new ConnectException("SSLHandshakeException: " + e.getMessage()).initCause(e)
                        : e;
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
                RetryPolicy.RetryAction action;
                try {
                    action = failover.shouldRetry(seen, 0, failovers, true);
                } catch (Exception policy) {
                    failed.addSuppressed(policy);
                    throw failed;
                }
                if (action.action == RetryPolicy.RetryAction.RetryDecision.FAIL && failovers >= hosts.length - 1) {
                    throw failed;
                }
                LOG.warn("{} failed to generate a data key under '{}' ({}): trying {}", hosts[at], keyName, e.toString(),
                        hosts.length > 1 ? "the next of its hosts" : "again");
                if ((failovers + 1) % hosts.length == 0) {
                    pause(action.delayMillis);
                }
                continue;
            }
            if (one.size() != 1) {
                throw new IOException(hosts[at] + " answered a request for one wrapped data key under '" + keyName
                        + "' with " + one.size());
            }
            return one.remove();
        }
    }

    /**
     * The KMS's refusal (HTTP 403) in {@code e} or its causes, or null: where a generation goes
     * through the queue of Hadoop's KMS client (this class's fallback), the client hands a refusal
     * on wrapped twice ({@code IOException(ExecutionException(AuthorizationException))}).
     */
    public static AccessControlException refusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof AccessControlException denied) {
                return denied;
            }
        }
        return null;
    }

    /** LoadBalancingKMSClientProvider's failover, from the same settings. */
    private static RetryPolicy failover(Configuration conf, int hosts) {
        Configuration settings = conf != null ? conf : new Configuration(false);
        int retries = settings.getInt(CommonConfigurationKeysPublic.KMS_CLIENT_FAILOVER_MAX_RETRIES_KEY, hosts);
        int base = settings.getInt(CommonConfigurationKeysPublic.KMS_CLIENT_FAILOVER_SLEEP_BASE_MILLIS_KEY,
                CommonConfigurationKeysPublic.KMS_CLIENT_FAILOVER_SLEEP_BASE_MILLIS_DEFAULT);
        int max = settings.getInt(CommonConfigurationKeysPublic.KMS_CLIENT_FAILOVER_SLEEP_MAX_MILLIS_KEY,
                CommonConfigurationKeysPublic.KMS_CLIENT_FAILOVER_SLEEP_MAX_MILLIS_DEFAULT);
        return RetryPolicies.failoverOnNetworkException(RetryPolicies.TRY_ONCE_THEN_FAIL, Math.max(0, retries), 0,
                Math.max(0, base), Math.max(0, max));
    }

    private static void pause(long millis) throws InterruptedIOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted between rounds of the KMS's hosts");
        }
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
