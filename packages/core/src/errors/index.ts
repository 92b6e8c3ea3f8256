export { errorCodes, isErrorCode, type ErrorCode } from './codes';
export { ProblemError, validationError, problemBody, type FieldError, type ProblemContext } from './problem';
