/**
 * The registry of request handlers: one per API, each declaring its advertised version range.
 * ApiVersions is built from this list.
 */
import type { HandlerSpec } from './define-handler';
import { alterConfigsHandler } from './alter-configs';
import { apiVersionsHandler } from './api-versions';
import { createPartitionsHandler } from './create-partitions';
import { createTopicsHandler } from './create-topics';
import { deleteRecordsHandler } from './delete-records';
import { deleteTopicsHandler } from './delete-topics';
import { describeClusterHandler } from './describe-cluster';
import { describeConfigsHandler } from './describe-configs';
import { fetchHandler } from './fetch';
import { incrementalAlterConfigsHandler } from './incremental-alter-configs';
import { listOffsetsHandler } from './list-offsets';
import { metadataHandler } from './metadata';
import { produceHandler } from './produce';

export const HANDLERS: readonly HandlerSpec[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  createPartitionsHandler,
  incrementalAlterConfigsHandler,
  describeClusterHandler,
];
