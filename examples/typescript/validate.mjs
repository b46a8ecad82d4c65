// Validate lines against the catalogue's JSON Schema with ajv (draft 2020-12, formats):
// `node validate.mjs SCHEMA.json < lines.jsonl` prints one JSON array, true or false per
// line (a line that is not JSON is false). One process for every line: how a service's
// own test would check its output.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const schema = JSON.parse(readFileSync(process.argv[2], "utf8"));
// strictRequired off: a required field may be missing when invalid_fields names it,
// which the schema says with "required" inside an anyOf.
const ajv = new Ajv2020.default({ strict: true, strictRequired: false });
addFormats.default(ajv);
// The document's own annotations (catalogue metadata, a field's precision): not rules.
ajv.addVocabulary(["x-agent-telemetry", "x-precision"]);
const validate = ajv.compile(schema);
const lines = readFileSync(0, "utf8").split("\n");
if (lines.at(-1) === "") lines.pop();
const verdicts = lines.map((text) => {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  return validate(value);
});
process.stdout.write(JSON.stringify(verdicts) + "\n");
