-- Scan data: one table per org-scoped resource, keyed by scan (generated from the registry by
-- runtime/platform/db/ddl.ts when this migration was written; frozen since).

CREATE TABLE connected_apps (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "name" text NOT NULL,
  "namespace" text,
  "last_used_date" timestamptz,
  "created_date" timestamptz NOT NULL,
  "contact_email" text,
  "oauth_scopes" text[] NOT NULL,
  "callback_urls" text[] NOT NULL,
  "permitted_users" text NOT NULL,
  "ip_relaxation" text NOT NULL,
  "refresh_token_policy" text NOT NULL,
  "user_count" bigint NOT NULL,
  "is_managed" boolean NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX connected_apps_default_idx ON connected_apps ("scan_id", "last_used_date" DESC NULLS LAST, "id");

CREATE TABLE connected_app_assignments (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "connected_app_id" bigint NOT NULL,
  "profile_id" text,
  "permission_set_id" text,
  "assignee_name" text NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX connected_app_assignments_default_idx ON connected_app_assignments ("scan_id", "connected_app_id" ASC NULLS FIRST, "id");

CREATE TABLE fields (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "sobject_id" bigint NOT NULL,
  "object_api_name" text NOT NULL,
  "api_name" text NOT NULL,
  "label" text NOT NULL,
  "type" text NOT NULL,
  "length" bigint,
  "is_custom" boolean NOT NULL,
  "namespace" text,
  "percent_populated" double precision NOT NULL,
  "populated_count" bigint NOT NULL,
  "record_count" bigint NOT NULL,
  "is_required" boolean NOT NULL,
  "is_unique" boolean NOT NULL,
  "is_external_id" boolean NOT NULL,
  "reference_to" text[] NOT NULL,
  "help_text" text,
  "description" text,
  "used_in_layouts" bigint NOT NULL,
  "used_in_reports" bigint NOT NULL,
  "used_in_automations" bigint NOT NULL,
  "created_date" timestamptz NOT NULL,
  "last_modified_date" timestamptz NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX fields_default_idx ON fields ("scan_id", "percent_populated" DESC NULLS LAST, "id");
CREATE INDEX object_fields_default_idx ON fields ("scan_id", "sobject_id", "percent_populated" DESC NULLS LAST, "id");

CREATE TABLE objects (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "api_name" text NOT NULL,
  "label" text NOT NULL,
  "is_custom" boolean NOT NULL,
  "namespace" text,
  "record_count" bigint NOT NULL,
  "field_count" bigint NOT NULL,
  "custom_field_count" bigint NOT NULL,
  "last_used_date" timestamptz,
  "created_date" timestamptz NOT NULL,
  "sharing_model" text NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX objects_default_idx ON objects ("scan_id", "last_used_date" DESC NULLS LAST, "id");

CREATE TABLE object_usages (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "object_id" bigint NOT NULL,
  "api_name" text NOT NULL,
  "record_count" bigint NOT NULL,
  "active_users_30d" bigint NOT NULL,
  "flow_count" bigint NOT NULL,
  "trigger_count" bigint NOT NULL,
  "workflow_count" bigint NOT NULL,
  "field_count" bigint NOT NULL,
  "custom_field_count" bigint NOT NULL,
  "last_created_date" timestamptz,
  "last_modified_date" timestamptz,
  "last_viewed_date" timestamptz,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX object_usages_default_idx ON object_usages ("scan_id", "record_count" DESC NULLS LAST, "id");

CREATE TABLE cloud_usages (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "clouds" jsonb NOT NULL,
  "summary" jsonb NOT NULL,
  PRIMARY KEY ("scan_id")
);

CREATE TABLE installed_packages (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "name" text NOT NULL,
  "namespace" text,
  "publisher" text NOT NULL,
  "version_name" text NOT NULL,
  "version_number" text NOT NULL,
  "type" text NOT NULL,
  "installed_date" timestamptz NOT NULL,
  "license_status" text NOT NULL,
  "seats_total" bigint,
  "seats_used" bigint,
  "expiration_date" date,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX installed_packages_default_idx ON installed_packages ("scan_id", "name" ASC NULLS FIRST, "id");

CREATE TABLE issues (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "issue_key" text NOT NULL,
  "title" text NOT NULL,
  "category" text NOT NULL,
  "priority" bigint NOT NULL,
  "effort" bigint NOT NULL,
  "namespace" text,
  "impact" text NOT NULL,
  "affected_count" bigint NOT NULL,
  "first_detected_date" timestamptz NOT NULL,
  PRIMARY KEY ("scan_id", "issue_key")
);
CREATE INDEX issues_default_idx ON issues ("scan_id", "priority" DESC NULLS LAST, "effort" ASC NULLS FIRST, "issue_key");

CREATE TABLE recommendations (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "issue_key" text NOT NULL,
  "title" text NOT NULL,
  "category" text NOT NULL,
  "priority" bigint NOT NULL,
  "effort" bigint NOT NULL,
  "summary" text NOT NULL,
  "rationale" text NOT NULL,
  "remediation_steps" text[] NOT NULL,
  "affected_items" jsonb NOT NULL,
  "references" jsonb NOT NULL,
  "estimated_minutes" bigint NOT NULL,
  PRIMARY KEY ("scan_id", "issue_key")
);

CREATE TABLE org_limits (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "name" text NOT NULL,
  "cap" bigint NOT NULL,
  "remaining" bigint NOT NULL,
  PRIMARY KEY ("scan_id", "name")
);
CREATE INDEX org_limits_default_idx ON org_limits ("scan_id", "name" ASC NULLS FIRST);

CREATE TABLE license_usages (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "api_name" text NOT NULL,
  "name" text NOT NULL,
  "type" text NOT NULL,
  "status" text NOT NULL,
  "total" bigint NOT NULL,
  "used" bigint NOT NULL,
  "expiration_date" date,
  PRIMARY KEY ("scan_id", "api_name")
);
CREATE INDEX license_usages_default_idx ON license_usages ("scan_id", "api_name" ASC NULLS FIRST);

CREATE TABLE sf_profiles (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "sf_profile_id" text NOT NULL,
  "name" text NOT NULL,
  "user_license" text NOT NULL,
  "user_type" text NOT NULL,
  "is_custom" boolean NOT NULL,
  "assigned_users" bigint NOT NULL,
  "active_users" bigint NOT NULL,
  "modify_all_data" boolean NOT NULL,
  "view_all_data" boolean NOT NULL,
  "manage_users" boolean NOT NULL,
  "data_export" boolean NOT NULL,
  "author_apex" boolean NOT NULL,
  "customize_application" boolean NOT NULL,
  "view_setup" boolean NOT NULL,
  "reset_passwords" boolean NOT NULL,
  "manage_internal_users" boolean NOT NULL,
  "api_enabled" boolean NOT NULL,
  "risky_permission_count" bigint NOT NULL,
  PRIMARY KEY ("scan_id", "sf_profile_id")
);
CREATE INDEX sf_profiles_default_idx ON sf_profiles ("scan_id", "name" ASC NULLS FIRST, "sf_profile_id");

CREATE TABLE permission_sets (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "permission_set_id" text NOT NULL,
  "name" text NOT NULL,
  "label" text NOT NULL,
  "is_custom" boolean NOT NULL,
  "namespace" text,
  "license" text,
  "assigned_users" bigint NOT NULL,
  "modify_all_data" boolean NOT NULL,
  "view_all_data" boolean NOT NULL,
  "manage_users" boolean NOT NULL,
  "data_export" boolean NOT NULL,
  "author_apex" boolean NOT NULL,
  "customize_application" boolean NOT NULL,
  "view_setup" boolean NOT NULL,
  "reset_passwords" boolean NOT NULL,
  "manage_internal_users" boolean NOT NULL,
  "api_enabled" boolean NOT NULL,
  "risky_permission_count" bigint NOT NULL,
  PRIMARY KEY ("scan_id", "permission_set_id")
);
CREATE INDEX permission_sets_default_idx ON permission_sets ("scan_id", "name" ASC NULLS FIRST, "permission_set_id");

CREATE TABLE login_activity (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "user_id" text NOT NULL,
  "username" text NOT NULL,
  "name" text NOT NULL,
  "profile_name" text NOT NULL,
  "license_type" text NOT NULL,
  "is_active" boolean NOT NULL,
  "last_login_date" timestamptz,
  "logins_30" bigint NOT NULL,
  "logins_90" bigint NOT NULL,
  "logins_365" bigint NOT NULL,
  PRIMARY KEY ("scan_id", "user_id")
);
CREATE INDEX login_activity_default_idx ON login_activity ("scan_id", "last_login_date" DESC NULLS LAST, "user_id");

CREATE TABLE code_counts (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "name" text NOT NULL,
  "path" text NOT NULL,
  "type" text NOT NULL,
  "namespace" text,
  "api_version" double precision NOT NULL,
  "total_lines" bigint NOT NULL,
  "code_lines" bigint NOT NULL,
  "comment_lines" bigint NOT NULL,
  "blank_lines" bigint NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX code_counts_default_idx ON code_counts ("scan_id", "total_lines" DESC NULLS LAST, "id");

CREATE TABLE class_types (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "class_name" text NOT NULL,
  "namespace" text,
  "class_type" text NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX class_types_default_idx ON class_types ("scan_id", "class_name" ASC NULLS FIRST, "id");

CREATE TABLE es_lints (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "file_name" text NOT NULL,
  "bundle" text NOT NULL,
  "component_type" text NOT NULL,
  "rule_id" text NOT NULL,
  "severity" text NOT NULL,
  "message" text NOT NULL,
  "line" bigint NOT NULL,
  "column" bigint NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX es_lints_default_idx ON es_lints ("scan_id", "file_name" ASC NULLS FIRST, "line" ASC NULLS FIRST, "id");

CREATE TABLE pmds (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "file_name" text NOT NULL,
  "class_name" text NOT NULL,
  "rule" text NOT NULL,
  "rule_set" text NOT NULL,
  "priority" bigint NOT NULL,
  "line" bigint NOT NULL,
  "message" text NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX pmds_default_idx ON pmds ("scan_id", "priority" ASC NULLS FIRST, "file_name" ASC NULLS FIRST, "id");

CREATE TABLE items (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "metadata_type" text NOT NULL,
  "full_name" text NOT NULL,
  "namespace" text,
  "manageable_state" text NOT NULL,
  "created_date" timestamptz NOT NULL,
  "last_modified_date" timestamptz NOT NULL,
  "created_by" text NOT NULL,
  "last_modified_by" text NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX items_default_idx ON items ("scan_id", "metadata_type" ASC NULLS FIRST, "full_name" ASC NULLS FIRST, "id");

CREATE TABLE flows (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "api_name" text NOT NULL,
  "label" text NOT NULL,
  "process_type" text NOT NULL,
  "status" text NOT NULL,
  "object_api_name" text,
  "trigger_type" text,
  "version_number" bigint NOT NULL,
  "api_version" double precision NOT NULL,
  "element_count" bigint NOT NULL,
  "last_modified_date" timestamptz NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX flows_default_idx ON flows ("scan_id", "api_name" ASC NULLS FIRST, "id");

CREATE TABLE triggers (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "name" text NOT NULL,
  "object_api_name" text NOT NULL,
  "namespace" text,
  "status" text NOT NULL,
  "events" text[] NOT NULL,
  "lines" bigint NOT NULL,
  "api_version" double precision NOT NULL,
  "coverage_percent" double precision,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX triggers_default_idx ON triggers ("scan_id", "object_api_name" ASC NULLS FIRST, "name" ASC NULLS FIRST, "id");

CREATE TABLE workflows (
  "scan_id" bigint NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  "id" bigint NOT NULL,
  "name" text NOT NULL,
  "object_api_name" text NOT NULL,
  "active" boolean NOT NULL,
  "trigger_type" text NOT NULL,
  "action_count" bigint NOT NULL,
  "last_modified_date" timestamptz NOT NULL,
  PRIMARY KEY ("scan_id", "id")
);
CREATE INDEX workflows_default_idx ON workflows ("scan_id", "object_api_name" ASC NULLS FIRST, "name" ASC NULLS FIRST, "id");
