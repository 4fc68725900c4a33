// Kafka's own Java consumer (kafka-clients 4.0.2), run as a process the way
// coordinator_kit.live.consumer_main runs kafka-python and librdkafka: the same command-line
// options, one JSON object per line on stdout (started, assigned, revoked, records, closing,
// closed, stalling, stalled), a clean close (commit, LeaveGroup) on SIGTERM or after
// --seconds. Compiled once by coordinator_kit.realkafka.java_driver against the fetched
// kafka-clients jar.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class ConsumerMain {
    private static final long START = System.nanoTime();

    private static synchronized void emit(String kind, String fields) {
        double t = (System.nanoTime() - START) / 1e9;
        System.out.println("{\"event\": \"" + kind + "\", \"t\": " + String.format("%.3f", t)
                + (fields.isEmpty() ? "" : ", " + fields) + "}");
        System.out.flush();
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static String partitions(Collection<TopicPartition> parts) {
        List<String> out = new ArrayList<>();
        parts.stream().sorted((a, b) -> a.topic().equals(b.topic())
                        ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()))
                .forEach(tp -> out.add("[" + quote(tp.topic()) + ", " + tp.partition() + "]"));
        return "\"partitions\": [" + String.join(", ", out) + "]";
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got " + argv[i]);
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, args.get("group"));
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, args.get("client-id"));
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, args.getOrDefault("reset", "earliest"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        p.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, args.getOrDefault("commit-interval-ms", "1000"));
        String protocol = args.getOrDefault("group-protocol", "classic");
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {  // with "consumer" the coordinator owns both
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, args.getOrDefault("session-timeout-ms", "10000"));
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, args.getOrDefault("heartbeat-interval-ms", "1000"));
        }
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, args.getOrDefault("max-poll-interval-ms", "300000"));
        p.put(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG, "200");
        p.put(ConsumerConfig.RECONNECT_BACKOFF_MS_CONFIG, "200");
        p.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "1000");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        if (args.containsKey("instance-id")) {
            p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, args.get("instance-id"));
        }
        double seconds = Double.parseDouble(args.getOrDefault("seconds", "60"));
        emit("started", "\"client\": \"java\", \"client_id\": " + quote(args.get("client-id"))
                + ", \"group\": " + quote(args.get("group")));
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        CountDownLatch closed = new CountDownLatch(1);
        final boolean[] stop = {false};
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop[0] = true;
            consumer.wakeup();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        consumer.subscribe(Arrays.asList(args.getOrDefault("topics", "orders").split(",")),
                new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                        emit("revoked", partitions(parts));
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                        emit("assigned", partitions(parts));
                    }
                });
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        // a scripted stall: when the parent creates --stall-file, stay out of poll() for
        // --stall-ms while the heartbeat thread goes on (max.poll.interval.ms runs out)
        java.io.File stallFile = args.containsKey("stall-file")
                ? new java.io.File(args.get("stall-file")) : null;
        long stallMs = Long.parseLong(args.getOrDefault("stall-ms", "0"));
        try {
            while (!stop[0] && System.nanoTime() < deadline) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(200));
                } catch (WakeupException e) {
                    break;
                }
                Map<String, long[]> seen = new TreeMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    long[] s = seen.computeIfAbsent(r.topic() + "\u0000" + r.partition(),
                            k -> new long[]{0, -1});
                    s[0]++;
                    s[1] = Math.max(s[1], r.offset());
                }
                for (Map.Entry<String, long[]> e : seen.entrySet()) {
                    String[] tp = e.getKey().split("\u0000");
                    emit("records", "\"topic\": " + quote(tp[0]) + ", \"partition\": " + tp[1]
                            + ", \"count\": " + e.getValue()[0] + ", \"last\": " + e.getValue()[1]);
                }
                if (stallFile != null && stallFile.delete()) {
                    emit("stalling", "\"ms\": " + stallMs);
                    long until = System.nanoTime() + stallMs * 1_000_000L;
                    while (!stop[0] && System.nanoTime() < until) {
                        Thread.sleep(50);
                    }
                    emit("stalled", "\"ms\": " + stallMs);
                }
            }
        } finally {
            emit("closing", "");
            consumer.close();
            emit("closed", "");
            closed.countDown();
        }
    }
}
