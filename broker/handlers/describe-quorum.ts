/**
 * DescribeQuorum (55), v0-2, on a broker of a KRaft controller quorum: forwarded to the active
 * controller as Kafka's KafkaApis does (quorum-forwarding.ts), which answers with the quorum's
 * voters and observers (this broker among the observers). Authorization as ControllerApis:
 * DESCRIBE on the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED. Registered only when the broker
 * follows a controller quorum.
 */
import type { DescribeQuorumRequest, DescribeQuorumResponse } from '../../protocol/generated/describe-quorum';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import { defineQuorumForwardingHandler } from './quorum-forwarding';

export const describeQuorumHandler = defineQuorumForwardingHandler<DescribeQuorumRequest, DescribeQuorumResponse>('DESCRIBE_QUORUM', AclOperation.DESCRIBE);
