import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The tests' reader of what Sluice wrote: Apache Kafka's own consumer, which shares no code with
 * Sluice or kafkajs. Reads every partition of a topic from the beginning until `expected` records
 * have arrived and then `settleMs` more have passed without any (so that duplicates would show),
 * or until `timeoutMs`. Prints one line per record: "record", then partition, offset, timestamp,
 * and the key and value in base64 ("-" for null).
 *
 * Arguments: brokers topic expected settleMs timeoutMs isolationLevel
 */
public final class TopicReader {
  private static final String NULL = "-";

  public static void main(String[] args) throws Exception {
    String brokers = args[0];
    String topic = args[1];
    int expected = Integer.parseInt(args[2]);
    long settleMs = Long.parseLong(args[3]);
    long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);
    Properties config = new Properties();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, args[5]);
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    Base64.Encoder base64 = Base64.getEncoder();
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII));
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
      List<TopicPartition> partitions = partitionsOf(consumer, topic, deadline);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      int read = 0;
      long lastArrival = System.currentTimeMillis();
      while (System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
          out.write("record " + record.partition() + " " + record.offset() + " " + record.timestamp() + " "
              + encode(base64, record.key()) + " " + encode(base64, record.value()) + "\n");
          read++;
          lastArrival = System.currentTimeMillis();
        }
        if (read >= expected && System.currentTimeMillis() - lastArrival >= settleMs) break;
      }
    }
    out.flush();
  }

  /** The topic's partitions, waiting for a topic being created to show in the metadata. */
  private static List<TopicPartition> partitionsOf(KafkaConsumer<byte[], byte[]> consumer, String topic, long deadline)
      throws InterruptedException {
    while (true) {
      List<PartitionInfo> infos = List.of();
      try {
        infos = consumer.partitionsFor(topic, Duration.ofSeconds(5));
      } catch (RetriableException notYet) {
        // Created a moment ago: the metadata has not caught up.
      }
      if (!infos.isEmpty()) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (PartitionInfo info : infos) partitions.add(new TopicPartition(topic, info.partition()));
        return partitions;
      }
      if (System.currentTimeMillis() >= deadline) throw new IllegalStateException("Topic " + topic + " does not exist");
      Thread.sleep(200);
    }
  }

  private static String encode(Base64.Encoder base64, byte[] bytes) {
    return bytes == null ? NULL : base64.encodeToString(bytes);
  }
}
