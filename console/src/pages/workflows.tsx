export function WorkflowsPage() {
  return (
    <section>
      <h1>Workflows</h1>
    </section>
  );
}

export function WorkflowPage({ id }: { id: string }) {
  return (
    <section>
      <h1>Workflow {id}</h1>
    </section>
  );
}
