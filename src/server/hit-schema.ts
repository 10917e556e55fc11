/** The fields of an event_search hit that say why it is there and what its turn holds (issue 34): match, foundIn, duplicates, turn. */
import * as v from "valibot";

const TurnEndSchema = v.looseObject({ entryId: v.string(), preview: v.optional(v.string()), highlights: v.optional(v.array(v.array(v.number()))) });

export const HIT_ANSWER_FIELDS = {
	match: v.pipe(
		v.picklist(["event", "turn", "later"]),
		v.description(
			'"event": the hit\'s text holds every term; "turn": it is its turn\'s answer, the words were found in the turn (foundIn); "later": the answer of a later session that reported the question takesUp again in other words',
		),
	),
	takesUp: v.optional(v.looseObject({ sessionId: v.string(), entryId: v.string() })),
	foundIn: v.optional(v.array(v.looseObject({ term: v.string(), entryIds: v.array(v.string()) }))),
	duplicates: v.optional(
		v.pipe(
			v.looseObject({ count: v.number(), ids: v.array(v.looseObject({ sessionId: v.string(), entryId: v.string() })) }),
			v.description("In-scope events whose output is byte-identical to this hit's, folded into it"),
		),
	),
	turn: v.pipe(
		v.nullable(v.looseObject({ prompt: TurnEndSchema, outcome: v.nullable(TurnEndSchema) })),
		v.description("The turn the hit belongs to: its prompt and its outcome (the turn's last assistant text); previews absent for the hit's own event"),
	),
};
