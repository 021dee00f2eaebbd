// Broker lists, apart from the Kafka client: the DataStream API validates them without loading kafkajs.

export const BROKERS_ENVIRONMENT_VARIABLE = 'KAFKA_BROKERS';

const HOST_PORT = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/**
 * Parses a comma-separated `host:port,host:port` list, naming where it came from in the
 * error so that a typo in an environment variable or a config file is easy to find.
 */
export function parseBrokerList(value: string, source: string): string[] {
  const brokers = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (brokers.length === 0) {
    throw new Error(`${source} is empty: give one or more brokers as host:port,host:port`);
  }
  for (const broker of brokers) {
    const match = HOST_PORT.exec(broker);
    const port = match ? Number(match[1]) : 0;
    if (!match || port < 1 || port > 65535) {
      throw new Error(`${source} has "${broker}", which is not host:port (for example 127.0.0.1:9092)`);
    }
  }
  return brokers;
}
