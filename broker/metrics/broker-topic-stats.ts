/**
 * Kafka's BrokerTopicStats: per-topic and all-topics counts of what clients produce and fetch
 * (BytesInPerSec, MessagesInPerSec, BytesOutPerSec, TotalProduceRequestsPerSec,
 * TotalFetchRequestsPerSec, FailedProduceRequestsPerSec, FailedFetchRequestsPerSec), the bytes
 * followers fetch from here (ReplicationBytesOutPerSec) and the bytes this broker's followers
 * append (ReplicationBytesInPerSec), those two for all topics only. Exposed by topic-metrics.ts at
 * scrape time; exists only while metrics are on, so a broker without them pays nothing.
 *
 * Cost on the produce and fetch paths: one map lookup and a few additions per partition per
 * request, no allocation after a topic's first record.
 *
 * Invariants: all-topics counts only grow; a deleted topic's own counts are dropped (Kafka removes
 * its metrics), the all-topics ones keep what it contributed. Like Kafka, bytes in count the record
 * sets appended for clients (not follower appends), messages in their record count, bytes out the
 * records returned to consumers.
 */
export interface TopicCounts {
  bytesIn: number;
  messagesIn: number;
  bytesOut: number;
  totalProduceRequests: number;
  failedProduceRequests: number;
  totalFetchRequests: number;
  failedFetchRequests: number;
}

/** Byte offset of a v2 record batch's record count (after base offset ... base sequence). */
const RECORDS_COUNT_OFFSET = 57;

function zero(): TopicCounts {
  return { bytesIn: 0, messagesIn: 0, bytesOut: 0, totalProduceRequests: 0, failedProduceRequests: 0, totalFetchRequests: 0, failedFetchRequests: 0 };
}

export class BrokerTopicStats {
  readonly allTopics: TopicCounts = zero();
  /** ReplicationBytesOutPerSec: records returned to follower fetches. */
  replicationBytesOut = 0;
  /** ReplicationBytesInPerSec: records this broker's followers appended. */
  replicationBytesIn = 0;
  private readonly topics = new Map<string, TopicCounts>();

  topic(name: string): TopicCounts {
    let c = this.topics.get(name);
    if (!c) this.topics.set(name, (c = zero()));
    return c;
  }

  /** One partition of a Produce request: appended (its record set and the batch's record count) or failed. */
  recordProduce(topic: string, records: Buffer | null, appended: boolean): void {
    const t = this.topic(topic);
    const all = this.allTopics;
    t.totalProduceRequests++;
    all.totalProduceRequests++;
    if (!appended || records === null) {
      t.failedProduceRequests++;
      all.failedProduceRequests++;
      return;
    }
    const messages = records.length >= RECORDS_COUNT_OFFSET + 4 ? records.readInt32BE(RECORDS_COUNT_OFFSET) : 0;
    t.bytesIn += records.length;
    all.bytesIn += records.length;
    t.messagesIn += messages;
    all.messagesIn += messages;
  }

  /** One partition of a Fetch response: the bytes of records returned, or a failure. */
  recordFetch(topic: string, bytes: number, failed: boolean, fromFollower: boolean): void {
    if (fromFollower) {
      this.replicationBytesOut += bytes;
      return;
    }
    const t = this.topic(topic);
    const all = this.allTopics;
    t.totalFetchRequests++;
    all.totalFetchRequests++;
    if (failed) {
      t.failedFetchRequests++;
      all.failedFetchRequests++;
      return;
    }
    t.bytesOut += bytes;
    all.bytesOut += bytes;
  }

  removeTopic(name: string): void {
    this.topics.delete(name);
  }

  topicEntries(): IterableIterator<[string, TopicCounts]> {
    return this.topics.entries();
  }
}
