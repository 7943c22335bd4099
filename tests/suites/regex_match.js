// The documentation's regular-expression UDF ("User-defined functions (UDFs) in Azure Cosmos DB"), unchanged.
function (input, pattern) {
    return input.match(pattern) !== null;
};
