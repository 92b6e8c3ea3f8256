export { errorCodes, isErrorCode, type ErrorCode } from './codes';
export { ProblemError, validationError, problemBody, type FieldError, type ProblemContext } from './problem';
export { errorReference, errorReferenceMarkdown, errorReferenceHtml, errorIndexMarkdown, errorIndexHtml, versioningMarkdown, versioningHtml, type ErrorReference } from './reference';
