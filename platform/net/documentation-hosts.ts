/**
 * Names reserved for documentation (RFC 2606 §3, RFC 6761 §6.5): example.com, example.net, example.org
 * and everything under them or under the `.example` top-level domain. The API's examples use them
 * (https://hooks.example.com/switchyard), and a webhook endpoint on one is accepted even where its name
 * does not resolve (offline, or a name under `.example`, which never does), so that the document's own
 * examples are requests the service accepts. Nothing is ever delivered there unless the name resolves to
 * public addresses: every delivery checks its destination again, and the connection too.
 */
import dns from 'node:dns';

const DOCUMENTATION_NAME = /(^|\.)(example|example\.com|example\.net|example\.org)$/;

export function isDocumentationHost(host: string): boolean {
  return DOCUMENTATION_NAME.test(host.toLowerCase().replace(/\.$/, ''));
}

/** True when DNS answers for the name at all (any address); false on any lookup error. */
export async function resolves(host: string): Promise<boolean> {
  try {
    return (await dns.promises.lookup(host, { all: true })).length > 0;
  } catch {
    return false;
  }
}
