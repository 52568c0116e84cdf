/**
 * Alertmanager's webhook payload, version 4 (the only version Alertmanager has sent since 0.x; the
 * JSON schema the route validates against is in `api-spec/openapi.yaml`, `AlertmanagerNotification`).
 * Fields Alertmanager adds in later releases are accepted and ignored.
 */

export type AlertStatus = 'firing' | 'resolved';

export interface AlertmanagerAlert {
  readonly status: AlertStatus;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /** RFC 3339. */
  readonly startsAt?: string;
  /** RFC 3339; `0001-01-01T00:00:00Z` while firing without a known end. */
  readonly endsAt?: string;
  readonly generatorURL?: string;
  /** Alertmanager's hash of the label set: the alert's identity across notifications. */
  readonly fingerprint: string;
}

export interface AlertmanagerNotification {
  readonly version: '4';
  readonly receiver: string;
  /** `firing` while any alert of the group fires. Each alert carries its own status. */
  readonly status: AlertStatus;
  readonly alerts: readonly AlertmanagerAlert[];
  readonly groupLabels?: Readonly<Record<string, string>>;
  readonly commonLabels?: Readonly<Record<string, string>>;
  readonly commonAnnotations?: Readonly<Record<string, string>>;
  readonly externalURL?: string;
  readonly groupKey?: string;
  /** Alerts left out by the receiver's `max_alerts`. */
  readonly truncatedAlerts?: number;
}
