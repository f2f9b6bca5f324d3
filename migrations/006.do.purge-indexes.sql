-- The housekeeping job deletes finished deliveries by age (src/store/webhooks.ts purgeDeliveryLog).
create index webhook_deliveries_created_idx on webhook_deliveries (created_at);
