/** Where a resource's page sits: a link back to its list, then the resource's id. */
import { Link } from 'wouter-preact';

export function Breadcrumb({ list, href, id }: { list: string; href: string; id: string }) {
  return (
    <nav aria-label="Breadcrumb" class="breadcrumb">
      <Link href={href}>{list}</Link> / <span class="mono">{id}</span>
    </nav>
  );
}
