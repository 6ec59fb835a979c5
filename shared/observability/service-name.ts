/** The service's name in logs (`service`), metrics (the `service` dimension) and traces. */
export const SERVICE_NAME = 'chat-orders-pdf-service';
