// "User-defined functions (UDFs) in Azure Cosmos DB": the documentation's tax UDF, unchanged.
function tax(income) {
    if (income == undefined)
        throw 'no input';
    if (income < 1000)
        return income * 0.1;
    else if (income < 10000)
        return income * 0.2;
    else
        return income * 0.4;
}
