// Flag schemas shared by several commands.
import { z } from 'zod';

/** A positive integer given as a string flag. */
export const IntFlag = z.coerce.number({ message: 'must be a number' }).int('must be a whole number');
export const LimitFlag = IntFlag.positive('must be > 0').optional();
