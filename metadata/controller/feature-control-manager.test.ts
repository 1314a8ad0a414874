/**
 * Finalized features in the controller: the fresh log's bootstrap levels (and those of a log an
 * older krill wrote without any), UpdateFeatures' validation with Kafka's messages
 * (FeatureControlManager: upgrade type, ranges of the controller and of each registered broker,
 * upgrade vs downgrade, metadata.version), all-or-nothing, validate_only, and the records replayed
 * after a restart.
 */
import { ErrorCode } from '../../protocol/errors';
import { InMemoryMetadataLog } from '../metadata-log';
import { followingImage, testController } from '../testing/test-controller';
import { checkBrokerFeatures, planFeatureUpdates, UpgradeType, type FeatureControlContext } from './feature-control-manager';
import { FeatureName, METADATA_VERSION_LEVEL, supportedFeatureRecords } from '../features';

const { UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE } = UpgradeType;
const TV = FeatureName.TRANSACTION_VERSION;
const MV = FeatureName.METADATA_VERSION;

function ctx(finalized: Record<string, number>, brokers: { id: number; supportedFeatures: Map<string, { min: number; max: number }> }[] = []): FeatureControlContext & { warnings: string[] } {
  const warnings: string[] = [];
  return { nodeId: 3000, finalized: new Map(Object.entries(finalized)), brokers, warn: (m) => warnings.push(m), warnings };
}

const failure = (c: FeatureControlContext, feature: string, level: number, upgradeType: number = UPGRADE): string => {
  const out = planFeatureUpdates(c, [{ feature, level, upgradeType }]);
  if (out.ok) throw new Error(`${feature}=${level} was accepted`);
  return out.message;
};

describe('planFeatureUpdates (FeatureControlManager.updateFeature)', () => {
  const finalized = { [MV]: METADATA_VERSION_LEVEL, [TV]: 1 };

  test('upgrade, safe and unsafe downgrade of transaction.version', () => {
    expect(planFeatureUpdates(ctx({ [MV]: 25 }), [{ feature: TV, level: 1, upgradeType: UPGRADE }])).toEqual({ ok: true, records: [{ name: TV, featureLevel: 1 }] });
    for (const t of [SAFE_DOWNGRADE, UNSAFE_DOWNGRADE]) {
      expect(planFeatureUpdates(ctx(finalized), [{ feature: TV, level: 0, upgradeType: t }])).toEqual({ ok: true, records: [{ name: TV, featureLevel: 0 }] });
    }
    // The same level again is neither: any type is accepted.
    expect(planFeatureUpdates(ctx(finalized), [{ feature: TV, level: 1, upgradeType: SAFE_DOWNGRADE }]).ok).toBe(true);
  });

  test('direction and upgrade type must agree', () => {
    expect(failure(ctx(finalized), TV, 0)).toBe(
      "Invalid update version 0 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.",
    );
    expect(failure(ctx({ [MV]: 25 }), TV, 1, SAFE_DOWNGRADE)).toBe("Invalid update version 1 for feature transaction.version. Can't downgrade to a newer version.");
    expect(failure(ctx(finalized), TV, 0, 4)).toBe('Invalid update version 0 for feature transaction.version. The controller does not support the given upgrade type.');
    expect(failure(ctx(finalized), TV, 0, 0)).toMatch(/does not support the given upgrade type/);
  });

  test('levels outside what the controller or a broker supports', () => {
    expect(failure(ctx(finalized), TV, 3)).toBe('Invalid update version 3 for feature transaction.version. Local controller 3000 only supports versions 0-2');
    // A broker that supports transaction.version 0-1 (an older krill) blocks 2.
    const tv1Broker = { id: 4, supportedFeatures: new Map([[TV, { min: 0, max: 1 }]]) };
    expect(failure(ctx(finalized, [tv1Broker]), TV, 2)).toBe('Invalid update version 2 for feature transaction.version. Broker 4 only supports versions 0-1');
    expect(planFeatureUpdates(ctx(finalized), [{ feature: TV, level: 2, upgradeType: UPGRADE }])).toEqual({ ok: true, records: [{ name: TV, featureLevel: 2 }] });
    expect(failure(ctx(finalized), FeatureName.GROUP_VERSION, 2)).toBe('Invalid update version 2 for feature group.version. Local controller 3000 only supports versions 0-1');
    expect(failure(ctx(finalized), 'no.such.feature', 1)).toBe('Invalid update version 1 for feature no.such.feature. Local controller 3000 does not support this feature.');
    expect(failure(ctx(finalized), 'no.such.feature', 0)).toBe('Invalid update version 0 for feature no.such.feature. Feature no.such.feature not found.');
    expect(failure(ctx(finalized), TV, -1, SAFE_DOWNGRADE)).toBe('Invalid update version -1 for feature transaction.version. A feature version cannot be less than 0.');
    const oldBroker = { id: 2, supportedFeatures: new Map([[TV, { min: 0, max: 0 }]]) };
    const krillBroker = { id: 1, supportedFeatures: new Map(supportedFeatureRecords().map((f) => [f.name, { min: f.minSupportedVersion, max: f.maxSupportedVersion }])) };
    expect(failure(ctx({ [MV]: 25 }, [krillBroker, oldBroker]), TV, 1)).toBe('Invalid update version 1 for feature transaction.version. Broker 2 does not support this feature.');
    expect(planFeatureUpdates(ctx({ [MV]: 25 }, [krillBroker]), [{ feature: TV, level: 1, upgradeType: UPGRADE }]).ok).toBe(true);
    // A broker that registered without features (an older krill) supports none.
    expect(failure(ctx({ [MV]: 25 }, [{ id: 4, supportedFeatures: new Map() }]), TV, 1)).toMatch(/Broker 4 does not support this feature\.$/);
  });

  test('metadata.version: only the level krill supports; setting it again is logged as an upgrade', () => {
    expect(failure(ctx(finalized), MV, 24, SAFE_DOWNGRADE)).toBe('Invalid update version 24 for feature metadata.version. Local controller 3000 only supports versions 25');
    expect(failure(ctx(finalized), MV, 26)).toMatch(/only supports versions 25$/);
    const c = ctx(finalized);
    expect(planFeatureUpdates(c, [{ feature: MV, level: 25, upgradeType: UPGRADE }])).toEqual({ ok: true, records: [{ name: MV, featureLevel: 25 }] });
    expect(c.warnings).toEqual(['Upgrading metadata.version from 4.0-IV3 to 4.0-IV3.']);
  });

  test('the first failing update fails them all; each refusal is logged', () => {
    const c = ctx(finalized);
    const out = planFeatureUpdates(c, [
      { feature: MV, level: 25, upgradeType: UPGRADE },
      { feature: TV, level: 0, upgradeType: UPGRADE },
    ]);
    expect(out).toEqual({ ok: false, message: expect.stringContaining("Can't downgrade the version of this feature") });
    expect(c.warnings[c.warnings.length - 1]).toBe((out as { message: string }).message);
  });
});

describe('checkBrokerFeatures (ClusterControlManager.processRegistrationFeature)', () => {
  const finalized = new Map([[MV, 25], [TV, 1]]);
  test("krill's ranges register as sent", () => {
    expect(checkBrokerFeatures(finalized, supportedFeatureRecords())).toEqual({ ok: true, features: supportedFeatureRecords() });
  });
  test('no metadata.version range means level 1 only; an unlisted finalized feature means level 0 only', () => {
    expect(checkBrokerFeatures(finalized, [])).toEqual({
      ok: false,
      message: 'Unable to register because the broker does not support finalized version 25 of metadata.version. The broker wants a version between 1 and 1, inclusive.',
    });
    expect(checkBrokerFeatures(finalized, [{ name: MV, minSupportedVersion: 20, maxSupportedVersion: 25 }])).toEqual({
      ok: false,
      message: 'Unable to register because the broker does not support finalized version 1 of transaction.version. The broker wants a version between 0 and 0, inclusive.',
    });
    expect(checkBrokerFeatures(new Map([[MV, 25]]), [{ name: MV, minSupportedVersion: 20, maxSupportedVersion: 25 }])).toEqual({
      ok: true,
      features: [{ name: MV, minSupportedVersion: 20, maxSupportedVersion: 25 }],
    });
  });
});

describe('finalized features through the Controller', () => {
  test('a fresh log starts with metadata.version 25, transaction.version 2 and group.version 1 (Kafka 4.0’s defaults at 4.0-IV3), replayed after a restart', async () => {
    const log = new InMemoryMetadataLog();
    const c = testController(log);
    expect(log.readAll()[0].records).toEqual([
      { type: 'FeatureLevelRecord', data: { name: MV, featureLevel: 25 } },
      { type: 'FeatureLevelRecord', data: { name: TV, featureLevel: 2 } },
      { type: 'FeatureLevelRecord', data: { name: FeatureName.GROUP_VERSION, featureLevel: 1 } },
    ]);
    expect(c.image.finalizedFeatures()).toEqual(new Map([[MV, 25], [TV, 2], [FeatureName.GROUP_VERSION, 1]]));
    await c.close();
    const again = testController(log);
    expect(log.readAll()).toHaveLength(1);
    expect(again.image.finalizedFeatures()).toEqual(new Map([[MV, 25], [TV, 2], [FeatureName.GROUP_VERSION, 1]]));
    await again.close();
  });

  test('a log without metadata.version (an older krill) is finalized at startup, after its records', async () => {
    const log = new InMemoryMetadataLog();
    log.append([{ type: 'ProducerIdsRecord', data: { brokerId: 0, brokerEpoch: 1n, nextProducerId: 1000n } }]);
    const c = testController(log);
    const batches = log.readAll();
    expect(batches).toHaveLength(2);
    expect(batches[1].records.map((r) => r.type)).toEqual(['FeatureLevelRecord', 'FeatureLevelRecord', 'FeatureLevelRecord']);
    expect(c.image.featureLevel(MV)).toBe(25);
    expect(c.image.nextProducerId).toBe(1000n);
    await c.close();
  });

  test('UpdateFeatures: a downgrade reaches the brokers as a FeatureLevelRecord; validate_only and failures write nothing', async () => {
    const log = new InMemoryMetadataLog();
    const c = testController(log);
    await c.registerBroker({ brokerId: 0, incarnationId: 'AAAAAAAAAAAAAAAAAAAAAA', endpoints: [], rack: null, logDirs: [] });
    const { image: broker } = followingImage(c);
    const end = () => log.readAll().length;

    const before = end();
    expect(await c.updateFeatures([{ feature: TV, level: 0, upgradeType: SAFE_DOWNGRADE }], true)).toEqual({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(end()).toBe(before);
    const refused = await c.updateFeatures(
      [
        { feature: TV, level: 0, upgradeType: SAFE_DOWNGRADE },
        { feature: FeatureName.GROUP_VERSION, level: 2, upgradeType: UPGRADE },
      ],
      false,
    );
    expect(refused).toEqual({
      errorCode: ErrorCode.INVALID_UPDATE_VERSION,
      errorMessage: 'The update failed for all features since the following feature had an error: Invalid update version 2 for feature group.version. Local controller 0 only supports versions 0-1',
    });
    expect(end()).toBe(before);
    expect(broker.featureLevel(TV)).toBe(2);

    expect(await c.updateFeatures([{ feature: TV, level: 0, upgradeType: SAFE_DOWNGRADE }], false)).toEqual({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(end()).toBe(before + 1);
    expect(broker.featureLevel(TV)).toBe(0);
    expect(broker.finalizedFeatures()).toEqual(new Map([[MV, 25], [FeatureName.GROUP_VERSION, 1]]));
    expect(await c.updateFeatures([{ feature: TV, level: 1, upgradeType: UPGRADE }], false)).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(broker.featureLevel(TV)).toBe(1);
    expect(await c.updateFeatures([{ feature: TV, level: 2, upgradeType: UPGRADE }], false)).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(broker.featureLevel(TV)).toBe(2);
    // The registered broker carried krill's ranges.
    expect(c.image.broker(0)?.supportedFeatures.get(TV)).toEqual({ min: 0, max: 2 });
    await c.close();
  });
});
