package dev.sluice.bench;

import java.time.Duration;
import java.util.Properties;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/**
 * The seed pipeline in Flink, for the benchmark: orders (JSON, keyed by category) → 5-minute
 * tumbling event-time windows with 10 s out-of-orderness → sum of amount per category →
 * JSON {category, windowStart, windowEnd, amount} through an EXACTLY_ONCE (or AT_LEAST_ONCE)
 * KafkaSink. The source is bounded at the topic's end at start, so the job ends by itself —
 * unless "paced": then the input arrives while the job runs, and the bench stops the job.
 * Prints READY once the job runs.
 *
 * Arguments: brokers inputTopic outputTopic checkpointIntervalMs parallelism guarantee [paced]
 */
public final class OrderTotalsJob {
  private static final long WINDOW = Duration.ofMinutes(5).toMillis();

  /** The value of a JSON number or string field, without a JSON library. */
  static String field(String json, String name) {
    int at = json.indexOf("\"" + name + "\"");
    int colon = json.indexOf(':', at);
    int start = colon + 1;
    while (json.charAt(start) == ' ') start++;
    if (json.charAt(start) == '"') return json.substring(start + 1, json.indexOf('"', start + 1));
    int end = start;
    while (end < json.length() && "-0123456789.eE".indexOf(json.charAt(end)) >= 0) end++;
    return json.substring(start, end);
  }

  public static void main(String[] args) throws Exception {
    String brokers = args[0];
    String input = args[1];
    String output = args[2];
    long checkpointInterval = Long.parseLong(args[3]);
    int parallelism = Integer.parseInt(args[4]);
    DeliveryGuarantee guarantee = DeliveryGuarantee.valueOf(args[5]);
    boolean paced = args.length > 6 && args[6].equals("paced");

    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism);
    env.enableCheckpointing(checkpointInterval);

    KafkaSourceBuilder<String> sourceBuilder = KafkaSource.<String>builder()
        .setBootstrapServers(brokers)
        .setTopics(input)
        .setGroupId("flink-bench-" + output)
        .setStartingOffsets(OffsetsInitializer.earliest())
        .setValueOnlyDeserializer(new SimpleStringSchema());
    if (!paced) sourceBuilder.setBounded(OffsetsInitializer.latest());
    KafkaSource<String> source = sourceBuilder.build();

    Properties producer = new Properties();
    producer.setProperty("transaction.timeout.ms", "600000");
    KafkaSink<String> sink = KafkaSink.<String>builder()
        .setBootstrapServers(brokers)
        .setKafkaProducerConfig(producer)
        .setRecordSerializer(KafkaRecordSerializationSchema.<String>builder()
            .setTopic(output)
            .setValueSerializationSchema(new SimpleStringSchema())
            .build())
        .setDeliveryGuarantee(guarantee)
        .setTransactionalIdPrefix("flink-bench-" + output)
        .build();

    env.fromSource(source,
            WatermarkStrategy.<String>forBoundedOutOfOrderness(Duration.ofSeconds(10))
                .withTimestampAssigner((order, previous) -> Long.parseLong(field(order, "timestamp"))),
            "orders")
        .map(order -> Tuple3.of(field(order, "category"), Long.parseLong(field(order, "timestamp")), Double.parseDouble(field(order, "amount"))))
        .returns(Types.TUPLE(Types.STRING, Types.LONG, Types.DOUBLE))
        .keyBy(order -> order.f0)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW)))
        .reduce((a, b) -> Tuple3.of(a.f0, Math.min(a.f1, b.f1), a.f2 + b.f2))
        .map(total -> {
          long windowStart = total.f1 - Math.floorMod(total.f1, WINDOW);
          return "{\"category\":\"" + total.f0 + "\",\"windowStart\":" + windowStart + ",\"windowEnd\":" + (windowStart + WINDOW)
              + ",\"amount\":" + (total.f2 % 1 == 0 ? String.valueOf(total.f2.longValue()) : String.valueOf(total.f2)) + "}";
        })
        .sinkTo(sink);

    long started = System.nanoTime();
    JobClient job = env.executeAsync("order-totals");
    while (job.getJobStatus().get() != JobStatus.RUNNING) Thread.sleep(50);
    System.out.println("READY");
    job.getJobExecutionResult().get();
    System.out.println("{\"elapsedMs\":" + (System.nanoTime() - started) / 1_000_000 + "}");
  }
}
