import { Link } from 'wouter-preact';

export function NotFoundPage() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. <Link href="/">Back to the runs</Link>.
      </p>
    </section>
  );
}
