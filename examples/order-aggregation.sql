-- The seed pipeline in Flink SQL: 5-minute order totals per category, exactly once.
-- The same job as order-aggregation.ts, with the same input and the same committed output:
--   orders (JSON {orderId, category, amount, timestamp}) → 5-minute tumbling windows per category,
--   10 s out-of-orderness → order-aggregates (JSON {category, windowStart, windowEnd, amount},
--   keyed by category), EXACTLY_ONCE. Run it with `npx sluice offline examples/order-aggregation.sql`.
SET 'pipeline.name' = 'order-aggregation-sql';
SET 'execution.checkpointing.interval' = '60 s';

CREATE TABLE orders (
  orderId STRING,
  category STRING,
  amount DOUBLE,
  `timestamp` BIGINT,
  ts AS TO_TIMESTAMP_LTZ(`timestamp`, 3),
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'properties.group.id' = 'order-aggregation-sql',
  'scan.startup.mode' = 'group-offsets',
  'properties.auto.offset.reset' = 'earliest',
  'format' = 'json',
  'json.fail-on-missing-field' = 'true'
);

CREATE TABLE order_aggregates (
  category STRING,
  windowStart BIGINT,
  windowEnd BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'order-aggregates',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'raw',
  'key.fields' = 'category',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'order-aggregation-sql-tx'
);

INSERT INTO order_aggregates
SELECT category, UNIX_TIMESTAMP(CAST(window_start AS STRING)) * 1000, UNIX_TIMESTAMP(CAST(window_end AS STRING)) * 1000, SUM(amount)
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' MINUTES))
GROUP BY category, window_start, window_end;
