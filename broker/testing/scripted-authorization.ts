/**
 * The set-up shared by authorization handler tests, on a broker or on a controller node: one
 * ScriptedAuthorizer (broker/security/testing/scripted-authorizer.ts) for the whole test file, which
 * the test file resets before every test (`beforeEach(() => authz.reset())`: everything denied,
 * nothing recorded as asked; this module is compiled into dist/ and so uses no jest globals); a DispatchClient to the
 * node whose requests it judges; a way to run set-up requests with everything allowed, after
 * which everything is denied again; and the cluster resource's name.
 */
import { ScriptedAuthorizer } from '../security/testing/scripted-authorizer';
import { DispatchClient, type Dispatching } from './dispatch-client';

export { CLUSTER_RESOURCE_NAME as CLUSTER_NAME } from '../../metadata/authorizer/authorizer';

export interface ScriptedAuthorization {
  /** Give it to the node (startBroker / ControllerServer.start `authorizer`). */
  readonly authz: ScriptedAuthorizer;
  /** One request through the node's dispatcher (DispatchClient.call). */
  call(apiKey: number, version: number, body: object): Promise<any>;
  /** Runs `setUp` with everything allowed, then denies everything again. */
  allowingEverything<T>(setUp: () => Promise<T>): Promise<T>;
}

/** Call at the top level of a test file, with `beforeEach(() => authz.reset())` beside it. */
export function scriptedAuthorization(node: () => Dispatching, clientId: string, listenerName?: string): ScriptedAuthorization {
  const authz = new ScriptedAuthorizer();
  const client = new DispatchClient(node, clientId, listenerName);
  return {
    authz,
    call: (apiKey, version, body) => client.call(apiKey, version, body),
    async allowingEverything<T>(setUp: () => Promise<T>): Promise<T> {
      authz.allowEverything();
      try {
        return await setUp();
      } finally {
        authz.reset();
      }
    },
  };
}
