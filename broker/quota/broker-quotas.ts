/**
 * A broker's client quota managers (Kafka's QuotaManagers): produce and fetch byte rates, request
 * time, controller mutations, all reading the client quotas of the metadata image, and the IP
 * connection creation rate the socket server applies. Rates use quota.window.num /
 * quota.window.size.seconds (controller mutations: controller.quota.window.num /
 * controller.quota.window.size.seconds), as in Kafka.
 *
 * The user of a request is its principal's name; on a listener without authentication that is
 * Kafka's `ANONYMOUS`, so quotas set for the default user or for `ANONYMOUS` apply to everyone there.
 */
import type { KafkaConfig } from '../../config/kafka-config';
import type { Time } from '../../common/time';
import { ClientQuotaManager, type ClientQuotaSource } from './client-quota-manager';
import { ControllerMutationQuotaManager } from './controller-mutation-quota';

/** Kafka's KafkaPrincipal.ANONYMOUS name. */
export const ANONYMOUS_USER = 'ANONYMOUS';

/** What the quotas need of the metadata image: the quota values of one entity. */
export interface ClientQuotaImage {
  clientQuota(entity: { user?: string | null; clientId?: string | null; ip?: string | null }): ReadonlyMap<string, number> | undefined;
}

export class BrokerQuotas {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;
  readonly controllerMutation: ControllerMutationQuotaManager;

  constructor(
    private readonly image: ClientQuotaImage,
    config: KafkaConfig,
    time: Time,
  ) {
    const source: ClientQuotaSource = { quotaValue: (entity, key) => image.clientQuota(entity)?.get(key) };
    const rate = { windowMs: config.getInt('quota.window.size.seconds') * 1000, samples: config.getInt('quota.window.num') };
    this.produce = new ClientQuotaManager('producer_byte_rate', source, rate, time);
    this.fetch = new ClientQuotaManager('consumer_byte_rate', source, rate, time);
    // Kafka's ClientRequestQuotaManager caps request-time throttles at one quota window.
    this.request = new ClientQuotaManager('request_percentage', source, rate, time, rate.windowMs);
    this.controllerMutation = new ControllerMutationQuotaManager(
      source,
      config.getInt('controller.quota.window.num'),
      config.getInt('controller.quota.window.size.seconds') * 1000,
      time,
    );
  }

  /** The `connection_creation_rate` of an address: its own entity, else the default IP entity. */
  ipConnectionRate(address: string): number | undefined {
    return this.image.clientQuota({ ip: address })?.get('connection_creation_rate') ?? this.image.clientQuota({ ip: null })?.get('connection_creation_rate');
  }
}
