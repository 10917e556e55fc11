/**
 * Pure conversion of the valibot schemas used by the tool table into JSON Schema (2020-12), so
 * each tool contract is written once. Supports exactly the schema kinds and actions the tool
 * table uses, and throws on anything else so a new kind cannot silently produce a wrong schema.
 */
import type * as v from "valibot";

type AnySchema = v.GenericSchema & { type: string; pipe?: { kind: string; type: string; requirement?: unknown; description?: string }[] };
type Json = Record<string, unknown>;

export function toJsonSchema(schema: v.GenericSchema): Json {
	return { $schema: "https://json-schema.org/draft/2020-12/schema", ...convert(schema as AnySchema) };
}

function convert(schema: AnySchema): Json {
	const s = schema as AnySchema & Record<string, unknown>;
	let out: Json;
	switch (s.type) {
		case "string":
			out = { type: "string" };
			break;
		case "number":
			out = { type: "number" };
			break;
		case "boolean":
			out = { type: "boolean" };
			break;
		case "null":
			out = { type: "null" };
			break;
		case "unknown":
		case "any":
			out = {};
			break;
		case "literal":
			out = { const: s.literal };
			break;
		case "picklist":
			out = { type: "string", enum: [...(s.options as string[])] };
			break;
		case "array":
			out = { type: "array", items: convert(s.item as AnySchema) };
			break;
		case "record":
			out = { type: "object", additionalProperties: convert(s.value as AnySchema) };
			break;
		case "object":
		case "strict_object":
		case "loose_object": {
			const properties: Json = {};
			const required: string[] = [];
			for (const [key, value] of Object.entries(s.entries as Record<string, AnySchema>)) {
				properties[key] = convert(value);
				if (value.type !== "optional" && value.type !== "nullish") required.push(key);
			}
			out = { type: "object", properties, ...(required.length ? { required } : {}) };
			if (s.type === "strict_object") out.additionalProperties = false;
			break;
		}
		case "optional":
		case "nullish": {
			const inner = convert(s.wrapped as AnySchema);
			out = s.type === "nullish" ? { anyOf: [inner, { type: "null" }] } : inner;
			if (s.default !== undefined && typeof s.default !== "function") out.default = s.default;
			break;
		}
		case "nullable":
			out = { anyOf: [convert(s.wrapped as AnySchema), { type: "null" }] };
			break;
		case "union":
		case "variant":
			out = { anyOf: (s.options as AnySchema[]).map(convert) };
			break;
		default:
			throw new Error(`toJsonSchema: unsupported valibot schema type ${s.type}`);
	}
	for (const action of s.pipe ?? []) {
		if (action.kind === "schema") continue;
		switch (action.type) {
			case "description":
				out.description = action.description;
				break;
			case "min_length":
				out[out.type === "array" ? "minItems" : "minLength"] = action.requirement;
				break;
			case "max_length":
				out[out.type === "array" ? "maxItems" : "maxLength"] = action.requirement;
				break;
			case "min_value":
				out.minimum = action.requirement;
				break;
			case "max_value":
				out.maximum = action.requirement;
				break;
			case "integer":
				out.type = "integer";
				break;
			default:
				throw new Error(`toJsonSchema: unsupported valibot action ${action.type}`);
		}
	}
	return out;
}
