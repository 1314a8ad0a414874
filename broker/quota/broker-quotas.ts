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
import { clientQuotaEntityKey, type MetadataCache } from '../../metadata/metadata-cache';
import { ClientQuotaManager, type ClientQuotaSource } from './client-quota-manager';
import { ControllerMutationQuotaManager } from './controller-mutation-quota';

/** What the quotas need of the metadata image: its quota changes, from the start. */
export type ClientQuotaImage = Pick<MetadataCache, 'subscribeClientQuotas'>;

export class BrokerQuotas {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;
  readonly controllerMutation: ControllerMutationQuotaManager;

  /** The quotas of every entity that has some, kept from the image's changes (the startup replay included). */
  private readonly byEntity = new Map<string, ReadonlyMap<string, number>>();

  constructor(
    image: ClientQuotaImage,
    config: KafkaConfig,
    time: Time,
  ) {
    image.subscribeClientQuotas((changes) => {
      for (const c of changes) {
        const key = clientQuotaEntityKey(c.entity);
        if (c.quotas.size === 0) this.byEntity.delete(key);
        else this.byEntity.set(key, new Map(c.quotas));
      }
    });
    // With no quota anywhere (the usual case) a lookup costs one size check.
    const source: ClientQuotaSource = {
      quotaValue: (entity, key) => this.byEntity.get(clientQuotaEntityKey(entity))?.get(key),
      isEmpty: () => this.byEntity.size === 0,
    };
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
    if (this.byEntity.size === 0) return undefined;
    const of = (ip: string | null) => this.byEntity.get(clientQuotaEntityKey({ ip }))?.get('connection_creation_rate');
    return of(address) ?? of(null);
  }
}
