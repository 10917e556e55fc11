/** What a retrieval strategy (candidates*.ts) hands on: rows to score or keep as read. */
import type { RankedRow } from "../../gate/gate.ts";
import type { SearchCoverage } from "./types.ts";

/** What one retrieval strategy found: the rows, and what the coverage says of them. */
export interface Found {
	/** The fragments found; their relevance is their kind weight until scored. */
	rows: RankedRow[];
	mode: SearchCoverage["mode"];
	rankedShare: number | null;
	/**
	 * Score every row from its terms (score.ts): they are every match of the parts read, or few
	 * enough. Otherwise they are a very common query's first RECENT_MATCHES in index order, ranked
	 * by kind weight alone.
	 */
	toScore: boolean;
	/** The rows hold every matching fragment of their events (absent: when mode is "full"). */
	wholeEvents?: boolean;
}
