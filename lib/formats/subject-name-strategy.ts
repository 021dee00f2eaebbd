/**
 * The subject a sink's schema is registered under, by Confluent's three strategies. The
 * registry checks compatibility within a subject, so the strategy decides which schemas must
 * evolve compatibly with which.
 */
export const SubjectNameStrategy = {
  /** `<topic>-value` (or `-key`): one schema per topic, the default of Confluent's serializers. */
  topicName: (topic: string, isKey = false): string => `${topic}-${isKey ? 'key' : 'value'}`,
  /** The record's full name: one schema per record type, whatever topic it is in. */
  recordName: (recordFullName: string): string => recordFullName,
  /** `<topic>-<record full name>`: several record types in one topic, each evolving on its own. */
  topicRecordName: (topic: string, recordFullName: string): string => `${topic}-${recordFullName}`,
};
