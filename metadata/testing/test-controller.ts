/**
 * Controller unit tests' Controller: a combined node (node 0, cluster 'c', no broker sessions, one
 * partition and replication factor 1 by default, every topic config accepted, quiet logs) over the
 * metadata log a test gives it (in memory unless a MetadataLogStore on disk is to be replayed by a
 * restart), with any option over those; and a broker's image following it, with the batches the
 * controller committed, as brokers see them.
 */
import { Logger } from '../../common/logger';
import { Controller, type ControllerOptions } from '../controller/controller';
import { InMemoryMetadataLog, type MetadataLog } from '../metadata-log';
import { MetadataCache } from '../metadata-cache';
import type { MetadataRecord } from '../metadata-records';

export function testController(log: MetadataLog = new InMemoryMetadataLog(), opts: Partial<Omit<ControllerOptions, 'log'>> = {}): Controller {
  return new Controller({
    nodeId: 0,
    clusterId: 'c',
    log,
    logger: new Logger('test', 'error'),
    defaultNumPartitions: () => 1,
    defaultReplicationFactor: () => 1,
    validateTopicConfig: () => undefined,
    ...opts,
  });
}

/** A broker image (cluster `clusterId`) that applies every batch `c` commits from now on (replayed ones first), and those batches. */
export function followingImage(c: Controller, clusterId = 'c'): { image: MetadataCache; batches: MetadataRecord[][] } {
  const image = new MetadataCache(clusterId);
  const batches: MetadataRecord[][] = [];
  c.subscribe((records, offset) => {
    batches.push(records);
    image.apply(records, offset);
  });
  return { image, batches };
}
