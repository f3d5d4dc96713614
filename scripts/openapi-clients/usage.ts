// Compiled with the types openapi-typescript generates from openapi.yaml (pvebill.ts, written by
// scripts/openapi-clients.sh next to this file in a temporary directory) under tsc --strict: the
// two headers every client must be able to send, the admin's `client` query parameter and the
// contract's own YAML text.
import type { components, operations, paths } from "./pvebill";

type CreateHeaders = NonNullable<operations["createService"]["parameters"]["header"]>;
type ServiceQuery = NonNullable<operations["getService"]["parameters"]["query"]>;
type Contract = paths["/openapi.yaml"]["get"]["responses"][200]["content"]["application/yaml"];

export const createHeaders: CreateHeaders = { "Idempotency-Key": "order-1001", "Accept-Language": "de" };
export const serviceQuery: ServiceQuery = { client: "whmcs" };
export const contract: Contract = "openapi: 3.0.3\n";
export const body: components["schemas"]["CreateService"] = {
  service_id: "svc-1",
  plan: "ct-small",
  hostname: "ct1",
  os: "debian-12",
};
