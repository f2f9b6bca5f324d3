/** The onboard flow's trigger: a signed POST of one customer to the onboard workflow's hook. */
import type { Pool } from 'undici';
import { signatureHeader } from '../../src/inbound-hooks/signature';
import { ONBOARD_WORKFLOW_ID, onboardInput } from './flow';

export function postSignedHook(pool: Pool, secret: string, customer: string, index: number) {
  const body = JSON.stringify(onboardInput(customer, index));
  return pool.request({
    method: 'POST',
    path: `/v1/hooks/${ONBOARD_WORKFLOW_ID}`,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signatureHeader(secret, body, Math.floor(Date.now() / 1000)),
    },
    body,
  });
}
