/** The shared counters between the writer and the prepare worker (pipeline.ts). */
export const SLOT_POSTED = 0;
export const SLOT_IN_FLIGHT = 1;
export const SLOT_STOP = 2;
export const SLOT_COUNT = 3;
