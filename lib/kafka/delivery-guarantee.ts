/** What a sink promises about its output, with Flink's names. */
export const DeliveryGuarantee = {
  /** Records may be lost or duplicated: no acknowledgements are awaited. */
  NONE: 'NONE',
  /** Every record arrives, possibly more than once: idempotent producer, acks=all, flushed before a batch succeeds. */
  AT_LEAST_ONCE: 'AT_LEAST_ONCE',
  /** Every record is visible exactly once to read_committed consumers: Kafka transactions committed per checkpoint. */
  EXACTLY_ONCE: 'EXACTLY_ONCE',
} as const;

export type DeliveryGuarantee = (typeof DeliveryGuarantee)[keyof typeof DeliveryGuarantee];
