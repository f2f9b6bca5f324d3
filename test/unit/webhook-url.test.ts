/**
 * Webhook registration accepts the document's own example URL (the conformance run of test/support/schemathesis): its host is a name
 * reserved for documentation (RFC 2606, RFC 6761), accepted even where it does not resolve (offline, or
 * under `.example`, which never resolves). Every other name must still resolve, to public addresses only.
 */
import { expect } from 'chai';
import { DestinationError } from '../../platform/net/destination-guard';
import { isDocumentationHost } from '../../platform/net/documentation-hosts';
import { checkWebhookUrl } from '../../src/api/webhooks';
import { openApiDocument } from '../../src/app';

const STRICT = { allowPrivate: false };

async function refusal(url: string): Promise<Error | undefined> {
  try {
    await checkWebhookUrl(url, STRICT);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

describe('webhook URLs at registration', () => {
  it("accepts the document's example URL (a documentation name) without private destinations", async () => {
    const doc = openApiDocument() as any;
    const url = doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].example.url as string;
    expect(isDocumentationHost(new URL(url).hostname), url).to.equal(true);
    expect(await refusal(url), url).to.equal(undefined);
  });

  it('accepts a documentation name that never resolves (under .example)', async () => {
    expect(await refusal('https://hooks.example/switchyard')).to.equal(undefined);
  });

  for (const host of ['example.com', 'a.b.example.net', 'EXAMPLE.ORG.', 'hooks.example']) {
    it(`treats ${host} as a documentation name`, () => expect(isDocumentationHost(host)).to.equal(true));
  }
  for (const host of [
    'example.co',
    'notexample.com',
    'example.com.evil.test',
    'localhost',
    'example.invalid',
  ]) {
    it(`does not treat ${host} as a documentation name`, () =>
      expect(isDocumentationHost(host)).to.equal(false));
  }

  it('refuses any other name that does not resolve', async () => {
    const error = await refusal('https://hooks.invalid/switchyard');
    expect(error).to.be.instanceOf(DestinationError);
    expect(error?.message).to.match(/does not resolve/);
  });

  it('keeps the form checks for documentation names: https only, no credentials', async () => {
    expect(await refusal('http://hooks.example.com/')).to.be.instanceOf(DestinationError);
    expect(await refusal('https://user:pw@hooks.example.com/')).to.be.instanceOf(DestinationError);
  });
});
