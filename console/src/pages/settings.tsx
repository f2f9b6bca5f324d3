export function SettingsPage() {
  return (
    <section>
      <h1>Settings</h1>
    </section>
  );
}
