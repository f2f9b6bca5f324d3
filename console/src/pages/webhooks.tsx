export function WebhooksPage() {
  return (
    <section>
      <h1>Webhooks</h1>
    </section>
  );
}

export function WebhookPage({ id }: { id: string }) {
  return (
    <section>
      <h1>Webhook {id}</h1>
    </section>
  );
}
