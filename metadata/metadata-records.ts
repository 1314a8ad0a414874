/**
 * The cluster-metadata records krill's controller writes to its metadata log and brokers apply,
 * shaped like Kafka's KRaft records (metadata/*.json): the same record type ids and field names,
 * so the log can be read with the generated codecs. Only the records krill uses are listed; each
 * carries its KRaft record type id.
 */
export const MetadataRecordType = {
  RegisterBrokerRecord: 0,
  UnregisterBrokerRecord: 1,
  TopicRecord: 2,
  PartitionRecord: 3,
  ConfigRecord: 4,
  PartitionChangeRecord: 5,
  FenceBrokerRecord: 7,
  UnfenceBrokerRecord: 8,
  RemoveTopicRecord: 9,
  UserScramCredentialRecord: 11,
  FeatureLevelRecord: 12,
  ClientQuotaRecord: 14,
  ProducerIdsRecord: 15,
  BrokerRegistrationChangeRecord: 17,
  AccessControlEntryRecord: 18,
  RemoveAccessControlEntryRecord: 19,
  NoOpRecord: 20,
  RemoveUserScramCredentialRecord: 22,
} as const;

/** ConfigRecord.resourceType values (Kafka's ConfigResource.Type ids). */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const;

export interface TopicRecordData {
  name: string;
  topicId: string;
}

export interface PartitionRecordData {
  partitionId: number;
  topicId: string;
  replicas: number[];
  isr: number[];
  removingReplicas: number[];
  addingReplicas: number[];
  leader: number;
  leaderRecoveryState: number;
  leaderEpoch: number;
  partitionEpoch: number;
  directories: string[];
  eligibleLeaderReplicas: number[] | null;
  lastKnownElr: number[] | null;
}

/** Fields left at their defaults (null / -2 for leader, -1 for recovery state) mean "unchanged". */
export interface PartitionChangeRecordData {
  partitionId: number;
  topicId: string;
  isr: number[] | null;
  leader: number;
  replicas: number[] | null;
  removingReplicas: number[] | null;
  addingReplicas: number[] | null;
  leaderRecoveryState: number;
  directories: string[] | null;
  eligibleLeaderReplicas: number[] | null;
  lastKnownElr: number[] | null;
}

export interface ConfigRecordData {
  resourceType: number;
  resourceName: string;
  name: string;
  value: string | null;
}

/**
 * One quota key of one client quota entity (KIP-546): `remove` true deletes the key (value is then
 * ignored), else the key is set to `value`. `entity` lists the entity's types ('user',
 * 'client-id', 'ip'), each at most once; a null name is that type's default entity.
 */
export interface ClientQuotaRecordData {
  entity: { entityType: string; entityName: string | null }[];
  key: string;
  value: number;
  remove: boolean;
}

/**
 * UserScramCredentialRecord / RemoveUserScramCredentialRecord `mechanism` values (Kafka's
 * ScramMechanism type bytes, shared by the AlterUserScramCredentials API; they never change).
 */
export const ScramMechanismType = { UNKNOWN: 0, SCRAM_SHA_256: 1, SCRAM_SHA_512: 2 } as const;

/**
 * One user's SCRAM credential for one mechanism (RFC 5802): the salt and iteration count the client
 * salts its password with, StoredKey = H(HMAC(SaltedPassword, "Client Key")) and ServerKey =
 * HMAC(SaltedPassword, "Server Key"). Neither the password nor the salted password is stored.
 */
export interface UserScramCredentialRecordData {
  name: string;
  mechanism: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
  iterations: number;
}

export interface RemoveUserScramCredentialRecordData {
  name: string;
  mechanism: number;
}

/**
 * One ACL (Kafka's StandardAclWithId.toRecord), keyed by a controller-assigned Uuid; the codes are
 * Kafka's ResourceType / PatternType / AclOperation / AclPermissionType codes.
 */
export interface AccessControlEntryRecordData {
  id: string;
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

/** Removes the ACL with this id. */
export interface RemoveAccessControlEntryRecordData {
  id: string;
}

export interface RemoveTopicRecordData {
  topicId: string;
}

export interface RegisterBrokerEndpoint {
  name: string;
  host: string;
  port: number;
  securityProtocol: number;
}

export interface RegisterBrokerRecordData {
  brokerId: number;
  isMigratingZkBroker: boolean;
  incarnationId: string;
  brokerEpoch: bigint;
  endPoints: RegisterBrokerEndpoint[];
  features: { name: string; minSupportedVersion: number; maxSupportedVersion: number }[];
  rack: string | null;
  fenced: boolean;
  inControlledShutdown: boolean;
  logDirs: string[];
}

/** Removes a broker's registration (Kafka's ClusterDelta drops it whatever the epoch). */
export interface UnregisterBrokerRecordData {
  brokerId: number;
  brokerEpoch: bigint;
}

/** BrokerRegistrationChangeRecord.fenced values (Kafka's BrokerRegistrationFencingChange). */
export const FencingChange = { UNFENCE: -1, NONE: 0, FENCE: 1 } as const;
/** BrokerRegistrationChangeRecord.inControlledShutdown values. */
export const ControlledShutdownChange = { NONE: 0, IN_CONTROLLED_SHUTDOWN: 1 } as const;

export interface BrokerRegistrationChangeRecordData {
  brokerId: number;
  brokerEpoch: bigint;
  fenced: number;
  inControlledShutdown: number;
  logDirs: string[];
}

/** Older forms of fencing (krill writes BrokerRegistrationChangeRecord, but reads these too). */
export interface FenceBrokerRecordData {
  id: number;
  epoch: bigint;
}

/** A finalized feature level (metadata.version, transaction.version, ...); level 0 removes the feature. */
export interface FeatureLevelRecordData {
  name: string;
  featureLevel: number;
}

export interface ProducerIdsRecordData {
  brokerId: number;
  brokerEpoch: bigint;
  nextProducerId: bigint;
}

export type MetadataRecord =
  | { type: 'TopicRecord'; data: TopicRecordData }
  | { type: 'PartitionRecord'; data: PartitionRecordData }
  | { type: 'PartitionChangeRecord'; data: PartitionChangeRecordData }
  | { type: 'ConfigRecord'; data: ConfigRecordData }
  | { type: 'ClientQuotaRecord'; data: ClientQuotaRecordData }
  | { type: 'RemoveTopicRecord'; data: RemoveTopicRecordData }
  | { type: 'RegisterBrokerRecord'; data: RegisterBrokerRecordData }
  | { type: 'UnregisterBrokerRecord'; data: UnregisterBrokerRecordData }
  | { type: 'BrokerRegistrationChangeRecord'; data: BrokerRegistrationChangeRecordData }
  | { type: 'FenceBrokerRecord'; data: FenceBrokerRecordData }
  | { type: 'UnfenceBrokerRecord'; data: FenceBrokerRecordData }
  | { type: 'ProducerIdsRecord'; data: ProducerIdsRecordData }
  | { type: 'FeatureLevelRecord'; data: FeatureLevelRecordData }
  | { type: 'AccessControlEntryRecord'; data: AccessControlEntryRecordData }
  | { type: 'RemoveAccessControlEntryRecord'; data: RemoveAccessControlEntryRecordData }
  | { type: 'UserScramCredentialRecord'; data: UserScramCredentialRecordData }
  | { type: 'RemoveUserScramCredentialRecord'; data: RemoveUserScramCredentialRecordData };
