/**
 * How SCRAM plugs into the SASL registry (registry.ts, SaslMechanismDeps): the server side of
 * SCRAM-SHA-256 / SCRAM-SHA-512 for a listener, reading credentials from a metadata image (a
 * broker's MetadataCache, or a controller node's image), and the client side for krill's own
 * connections. A node passes `scramMechanismDeps(image)` in the deps it gives the registry; nothing
 * else knows about SCRAM. Invariant: the credentials are read at each authentication, so a
 * credential altered or removed applies to the next authentication on every listener (existing
 * sessions are not affected, as in Kafka).
 */
import type { SaslMechanismDeps } from './registry';
import { ScramServerMechanism, type ScramCredentialStore } from './scram-server';
import { createScramClient } from './scram-client';
import { scramMechanismByName } from '../../../metadata/controller/scram-control-manager';

export function scramMechanismDeps(store: ScramCredentialStore): Required<Pick<SaslMechanismDeps, 'scramServer' | 'scramClient'>> {
  return {
    scramServer: (ctx) => {
      const m = scramMechanismByName(ctx.mechanism);
      if (!m) throw new Error(`${ctx.mechanism} is not a SCRAM mechanism`);
      return new ScramServerMechanism(m, store);
    },
    scramClient: (config) => createScramClient(config),
  };
}
