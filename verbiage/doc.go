// Package verbiage owns names and paths: the rules for every string that
// names something in a store, and nothing else. It knows no git and no files,
// so every other package can apply the same rules to untrusted input before
// it reaches the repository.
//
// It covers:
//
//   - key paths (Path, ParsePath): the dot form a.b.0.c and the slash form
//     a/b/0/c that address a value inside a JSON document, with array indexes,
//     "-" for append and "*" as a wildcard;
//   - verbiage keys (the state document specification): object keys of the state document must match
//     ^[A-Z]+(-[A-Z]+)*$; ValidKey checks, NormalizeKey turns user input such
//     as "my goal" into MY-GOAL, NormalizeKeys and ValidateKeys walk decoded
//     JSON values;
//   - identifiers (the RLM state specification): variable names ^[a-zA-Z_][a-zA-Z0-9_]*$
//     (ValidIdentifier), advisory naming conventions (NamingAdvice), and
//     generated ids such as state-a1b2c3d4 (ValidID);
//   - store paths (CleanStorePath, CleanStoreDir): file paths inside the
//     store's tree, refused when git, another platform's checkout or a path
//     traversal could misread them;
//   - path patterns (CompilePattern): gitattributes(5) patterns, so merge
//     strategies, ruled documents and access policy select paths exactly as
//     git itself does.
//
// Errors wrap the sentinels ErrInvalidPath, ErrInvalidKey, ErrInvalidName and
// ErrInvalidPattern, which callers map to the usage exit code.
package verbiage
