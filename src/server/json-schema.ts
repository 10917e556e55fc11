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
	const out = convertType(schema as AnySchema & Record<string, unknown>);
	for (const action of schema.pipe ?? []) if (action.kind !== "schema") applyAction(out, action);
	return out;
}

/** The schema kind itself, without its pipe. */
function convertType(s: AnySchema & Record<string, unknown>): Json {
	switch (s.type) {
		case "string":
		case "number":
		case "boolean":
		case "null":
			return { type: s.type };
		case "unknown":
		case "any":
			return {};
		case "literal":
			return { const: s.literal };
		case "picklist":
			return { type: "string", enum: [...(s.options as string[])] };
		case "array":
			return { type: "array", items: convert(s.item as AnySchema) };
		case "record":
			return { type: "object", additionalProperties: convert(s.value as AnySchema) };
		case "object":
		case "strict_object":
		case "loose_object":
			return convertObject(s.entries as Record<string, AnySchema>, s.type === "strict_object");
		case "optional":
		case "nullish": {
			const inner = convert(s.wrapped as AnySchema);
			const out: Json = s.type === "nullish" ? { anyOf: [inner, { type: "null" }] } : inner;
			if (s.default !== undefined && typeof s.default !== "function") out.default = s.default;
			return out;
		}
		case "nullable":
			return { anyOf: [convert(s.wrapped as AnySchema), { type: "null" }] };
		case "union":
		case "variant":
			return { anyOf: (s.options as AnySchema[]).map(convert) };
		default:
			throw new Error(`toJsonSchema: unsupported valibot schema type ${s.type}`);
	}
}

function convertObject(entries: Record<string, AnySchema>, strict: boolean): Json {
	const properties: Json = {};
	const required: string[] = [];
	for (const [key, value] of Object.entries(entries)) {
		properties[key] = convert(value);
		if (value.type !== "optional" && value.type !== "nullish") required.push(key);
	}
	return { type: "object", properties, ...(required.length ? { required } : {}), ...(strict ? { additionalProperties: false } : {}) };
}

/** One pipe action (validation or metadata) as JSON Schema keywords on `out`. */
function applyAction(out: Json, action: NonNullable<AnySchema["pipe"]>[number]): void {
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
