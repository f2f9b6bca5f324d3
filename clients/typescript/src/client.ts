/**
 * The Switchyard client for Node: every API operation (api-client.ts) plus `hooks`, which signs inbound
 * hooks with node:crypto. Browsers import `@switchyard/client/browser` instead (api-client.ts alone).
 */
import { SwitchyardApiClient, unwrap, type Accepted, type SwitchyardClientOptions } from './api-client';
import { HOOK_SIGNATURE_HEADER, hookSignatureHeader } from './hooks';

export * from './api-client';

export class SwitchyardClient extends SwitchyardApiClient {
  readonly hooks = {
    /**
     * Sends a signed inbound hook (no API key needed): the body is serialized once and signed with the
     * workflow's hook secret (several secrets while rolling one).
     */
    trigger: (
      workflowId: string,
      input: Record<string, unknown>,
      options: { secret: string | readonly string[]; timestamp?: number },
    ): Promise<Accepted> => {
      const raw = JSON.stringify(input);
      return unwrap(
        this.raw.POST('/v1/hooks/{workflow}', {
          params: {
            path: { workflow: workflowId },
            header: { [HOOK_SIGNATURE_HEADER]: hookSignatureHeader(options.secret, raw, options.timestamp) },
          },
          body: input,
          bodySerializer: () => raw,
        }),
      );
    },
  };
}

export function createSwitchyardClient(options: SwitchyardClientOptions): SwitchyardClient {
  return new SwitchyardClient(options);
}
